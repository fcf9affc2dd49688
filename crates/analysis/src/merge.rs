//! Results of the same plan from several processes or machines, merged
//! exactly: histograms added (and summarized again), counts and throughput
//! summed over the same window, timelines added bucket by bucket; then
//! analyzed again as one run.
use crate::analyze::analyze;
use crate::shard_merge;
use poolbench_model::{
    decode_histogram, encode_histogram, CellResult, RunResult, Summary, Timeline,
};
use std::collections::BTreeMap;

/// The results in `parts`, merged; a mismatch of plans or cells says
/// what differs.
pub fn merge(parts: &[RunResult]) -> Result<RunResult, String> {
    let sharded = parts.iter().any(|r| r.shard.is_some());
    let relabeled;
    let parts = match sharded {
        true => {
            relabeled = shard_merge::prepare(parts)?;
            &relabeled[..]
        }
        false => parts,
    };
    let (first, rest) = parts.split_first().ok_or("nothing to merge")?;
    let plan = serde_json::to_value(&first.config).map_err(|e| e.to_string())?;
    for (i, r) in rest.iter().enumerate() {
        let other = serde_json::to_value(&r.config).map_err(|e| e.to_string())?;
        if other != plan {
            let differ: Vec<String> = match (&plan, &other) {
                (serde_json::Value::Object(a), serde_json::Value::Object(b)) => a
                    .keys()
                    .chain(b.keys())
                    .filter(|k| a.get(*k) != b.get(*k))
                    .cloned()
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                _ => vec!["config".into()],
            };
            return Err(format!(
                "result {} was run with another plan (differs in: {})",
                i + 2,
                differ.join(", ")
            ));
        }
        if r.cells.len() != first.cells.len() {
            return Err(format!(
                "result {} has {} cells, the first {}",
                i + 2,
                r.cells.len(),
                first.cells.len()
            ));
        }
    }
    let mut merged = first.clone();
    for (i, cell) in merged.cells.iter_mut().enumerate() {
        for r in rest {
            add(cell, &r.cells[i])?;
        }
    }
    merged.started_at = parts
        .iter()
        .map(|r| r.started_at.clone())
        .min()
        .unwrap_or_default();
    merged.interrupted = parts.iter().find_map(|r| r.interrupted.clone());
    merged.server = None;
    if sharded {
        merged.shard = None;
        merged.merged_shards = Some(parts.len());
    }
    analyze(&mut merged);
    Ok(merged)
}

fn max(x: Option<f64>, y: Option<f64>) -> Option<f64> {
    match (x, y) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn sum_maps(a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>) {
    for (k, v) in b {
        *a.entry(k.clone()).or_default() += v;
    }
}

/// Adds `b`'s encoded histogram into `a`'s; the sum's summary.
fn add_histogram(a: &mut String, b: &str) -> Result<Option<Summary>, String> {
    if a.is_empty() || b.is_empty() {
        return Ok(None);
    }
    let mut h = decode_histogram(a)?;
    h.add(decode_histogram(b)?)
        .map_err(|e| format!("histograms do not add: {e:?}"))?;
    *a = encode_histogram(&h);
    Ok(Some(Summary::of(&h)))
}

/// As [`add_histogram`] for a histogram only some protocols fill: an
/// empty one holds no value, so the sum is the other.
fn add_optional_histogram(a: &mut String, b: &str) -> Result<Option<Summary>, String> {
    if b.is_empty() {
        return Ok(None);
    }
    if a.is_empty() {
        *a = b.to_string();
        return Ok(Some(Summary::of(&decode_histogram(a)?)));
    }
    add_histogram(a, b)
}

fn add(a: &mut CellResult, b: &CellResult) -> Result<(), String> {
    if (a.strategy.as_str(), a.concurrency, a.pool_size)
        != (b.strategy.as_str(), b.concurrency, b.pool_size)
    {
        return Err(format!("cells differ: {} against {}", a.label(), b.label()));
    }
    a.interrupted |= b.interrupted;
    a.resent += b.resent;
    a.idle_reuse.merge(&b.idle_reuse);
    a.requests += b.requests;
    a.ok += b.ok;
    a.body_bytes += b.body_bytes;
    a.warmup_requests += b.warmup_requests;
    a.after_end += b.after_end;
    a.unfinished += b.unfinished;
    a.errors.total += b.errors.total;
    sum_maps(&mut a.errors.by_kind, &b.errors.by_kind);
    sum_maps(&mut a.errors.by_status, &b.errors.by_status);
    for (code, m) in &b.errors.messages {
        a.errors
            .messages
            .entry(code.clone())
            .or_insert_with(|| m.clone());
    }
    a.throughput_rps += b.throughput_rps;
    a.achieved_rate += b.achieved_rate;
    a.achieved_concurrency += b.achieved_concurrency;
    a.requested_rate = a.requested_rate.zip(b.requested_rate).map(|(x, y)| x + y);
    a.late += b.late;
    a.dropped += b.dropped;
    // The processes ran side by side: per repetition, their throughputs add
    // and the worse p99 stands; the intervals are those of the sums.
    for (s, t) in a.samples.iter_mut().zip(&b.samples) {
        s.throughput_rps += t.throughput_rps;
        s.p99_us = s.p99_us.max(t.p99_us);
    }
    a.throughput_ci95 = None;
    a.p99_ci95_us = None;
    add_histograms(a, b)?;
    add_connections(a, b);
    a.generator_cpu = max(a.generator_cpu, b.generator_cpu);
    a.machine_cpu = max(a.machine_cpu, b.machine_cpu);
    a.server = None;
    a.schedule_lag_ms = max(a.schedule_lag_ms, b.schedule_lag_ms);
    add_timeline(a, b);
    a.stalls.extend(b.stalls.iter().copied());
    if a.latency_intervals.len() == b.latency_intervals.len() {
        for (x, y) in a.latency_intervals.iter_mut().zip(&b.latency_intervals) {
            add_histogram(&mut x.latency_ns, &y.latency_ns)?;
        }
    } else {
        a.latency_intervals.clear();
    }
    a.shards.extend(b.shards.iter().cloned());
    Ok(())
}

/// Adds `b`'s histograms into `a`'s, and summarizes the sums.
fn add_histograms(a: &mut CellResult, b: &CellResult) -> Result<(), String> {
    let h = &mut a.histograms;
    if let Some(s) = add_histogram(&mut h.latency_ns, &b.histograms.latency_ns)? {
        a.latency_us = s;
    }
    if let Some(s) = add_histogram(&mut h.checkout_wait_ns, &b.histograms.checkout_wait_ns)? {
        a.checkout_wait_us = s;
    }
    if let Some(s) = add_histogram(&mut h.request_ns, &b.histograms.request_ns)? {
        a.request_us = s;
    }
    if let Some(s) = add_histogram(&mut h.connect_ns, &b.histograms.connect_ns)? {
        a.connect_us = s;
    }
    if let Some(s) = add_histogram(&mut h.send_lag_ns, &b.histograms.send_lag_ns)? {
        a.send_lag_us = Some(s);
    }
    if let Some(s) = add_histogram(
        &mut h.generator_hiccups_ns,
        &b.histograms.generator_hiccups_ns,
    )? {
        a.generator_hiccups_us = s;
    }
    if let Some(s) = add_optional_histogram(&mut h.first_byte_ns, &b.histograms.first_byte_ns)? {
        a.first_byte_us = Some(s);
    }
    if let Some(s) = add_optional_histogram(&mut h.last_byte_ns, &b.histograms.last_byte_ns)? {
        a.last_byte_us = Some(s);
    }
    // Kept only as a summary: not mergeable exactly.
    a.latency_uncorrected_us = None;
    Ok(())
}

/// Adds `b`'s connection counts into `a`'s.
fn add_connections(a: &mut CellResult, b: &CellResult) {
    let c = &mut a.connections;
    c.opened += b.connections.opened;
    c.closed += b.connections.closed;
    c.peak_open += b.connections.peak_open;
    c.idle_at_end += b.connections.idle_at_end;
    c.requests_per_connection = match c.opened {
        0 => 0.0,
        n => (a.ok + a.warmup_requests) as f64 / n as f64,
    };
    a.opened_during_measurement += b.opened_during_measurement;
    a.reopened += b.reopened;
    a.connections.opened_in_warmup_by_s = max(
        a.connections.opened_in_warmup_by_s,
        b.connections.opened_in_warmup_by_s,
    );
}

/// Adds `b`'s timeline into `a`'s, bucket by bucket, aligned on the wall
/// clock where both know when they started.
fn add_timeline(a: &mut CellResult, b: &CellResult) {
    let bucket_s = a.timeline.bucket_ms as f64 / 1000.0;
    if a.timeline.bucket_ms != b.timeline.bucket_ms || bucket_s <= 0.0 {
        return;
    }
    let mut u = b.timeline.clone();
    if let (Some(x), Some(y)) = (a.started_unix_s, b.started_unix_s) {
        let offset = ((y - x) / bucket_s).round() as i64;
        match offset {
            o if o > 0 => shift(&mut u, o as usize),
            o if o < 0 => {
                shift(&mut a.timeline, (-o) as usize);
                a.started_unix_s = Some(y);
            }
            _ => {}
        }
    }
    let t = &mut a.timeline;
    t.measure_from_bucket = t.measure_from_bucket.max(u.measure_from_bucket);
    add_counts(&mut t.ok, &u.ok);
    add_counts(&mut t.errors, &u.errors);
    add_counts(&mut t.inflight, &u.inflight);
    add_counts(&mut t.open, &u.open);
    if t.wait_us.len() < u.wait_us.len() {
        t.wait_us.resize(u.wait_us.len(), 0);
    }
    for (x, y) in t.wait_us.iter_mut().zip(&u.wait_us) {
        *x += y;
    }
}

fn add_counts(a: &mut Vec<u32>, b: &[u32]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Start `t` `n` buckets later: zeros in front.
fn shift(t: &mut Timeline, n: usize) {
    for v in [&mut t.ok, &mut t.errors, &mut t.inflight, &mut t.open] {
        if !v.is_empty() {
            v.splice(0..0, std::iter::repeat_n(0, n));
        }
    }
    if !t.wait_us.is_empty() {
        t.wait_us.splice(0..0, std::iter::repeat_n(0, n));
    }
    t.measure_from_bucket += n;
}
