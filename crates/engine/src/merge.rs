//! Results of the same plan from several processes or machines, merged
//! exactly: histograms added (and summarized again), counts and throughput
//! summed over the same window, timelines added bucket by bucket; the
//! findings and the recommendation made again from the merged cells.
use crate::findings;
use crate::record::{decode_histogram, encode_histogram, Summary};
use crate::result::{CellResult, RunResult};
use std::collections::BTreeMap;

/// The results in `parts`, merged; a mismatch of plans or cells says
/// what differs.
pub fn merge(parts: &[RunResult]) -> Result<RunResult, String> {
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
    merged.scaling = findings::usl_fits(&merged);
    merged.pitfalls = findings::pitfalls(&merged);
    merged.recommendation = None;
    merged.no_recommendation = None;
    match findings::recommend(&merged) {
        Ok(r) => merged.recommendation = Some(r),
        Err(why) => merged.no_recommendation = Some(why),
    }
    Ok(merged)
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

fn add(a: &mut CellResult, b: &CellResult) -> Result<(), String> {
    if (a.strategy.as_str(), a.concurrency, a.pool_size)
        != (b.strategy.as_str(), b.concurrency, b.pool_size)
    {
        return Err(format!(
            "cells differ: {} c={} against {} c={}",
            a.strategy, a.concurrency, b.strategy, b.concurrency
        ));
    }
    a.interrupted |= b.interrupted;
    a.resent += b.resent;
    a.requests += b.requests;
    a.ok += b.ok;
    a.warmup_requests += b.warmup_requests;
    a.after_end += b.after_end;
    a.unfinished += b.unfinished;
    a.errors.total += b.errors.total;
    sum_maps(&mut a.errors.by_kind, &b.errors.by_kind);
    sum_maps(&mut a.errors.by_status, &b.errors.by_status);
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
    // Kept only as a summary: not mergeable exactly.
    a.latency_uncorrected_us = None;
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
    let max = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    a.generator_cpu = max(a.generator_cpu, b.generator_cpu);
    a.machine_cpu = max(a.machine_cpu, b.machine_cpu);
    a.server = None;
    let (t, u) = (&mut a.timeline, &b.timeline);
    if t.bucket_ms == u.bucket_ms {
        let n = t.ok.len().max(u.ok.len());
        for v in [&mut t.ok, &mut t.errors, &mut t.inflight] {
            v.resize(n, 0);
        }
        for i in 0..u.ok.len() {
            t.ok[i] += u.ok[i];
            t.errors[i] += u.errors[i];
            t.inflight[i] += u.inflight[i];
        }
    }
    a.stalls.extend(b.stalls.iter().copied());
    Ok(())
}
