//! A measured point of the search, from the cells of its runs: throughput
//! with a confidence interval from batch means, latency from the merged
//! histograms, and whether it failed.
use super::failure::Failure;
use poolbench_model::{
    decode_histogram, mean_ci95, new_histogram, CellResult, Slo, Summary, TunePhase, TunePoint,
};

/// Buckets of the 100 ms timeline per batch whose mean gives one sample
/// of the throughput (a fifth of a second: five samples in a second's run).
const BATCH_BUCKETS: usize = 2;

/// One point from the runs of one cell (each run a `CellResult`).
pub fn point_of(phase: TunePhase, rate: Option<f64>, runs: &[CellResult]) -> TunePoint {
    let first = &runs[0];
    let requests: u64 = runs.iter().map(|c| c.requests).sum();
    let errors: u64 = runs.iter().map(|c| c.errors.total).sum();
    let duration_s: f64 = runs.iter().map(|c| c.duration_s).sum();
    let by_kind = errors_by_kind(runs);
    let latency = merged_latency(runs);
    let stalled_s = stalled_seconds(runs, requests, duration_s);
    // A gap shorter than two answers' time is waiting for an answer.
    let clean = errors == 0 && stalled_s < 2.0 * latency.mean / 1e6 && rate.is_none();
    let (throughput, ci95, from_latency) = throughput_of(runs, &latency, duration_s, clean);
    let wait: f64 = weighted(runs, |c| c.checkout_wait_us.mean);
    TunePoint {
        phase,
        strategy: first.strategy.clone(),
        in_flight: first.concurrency,
        pool_size: first
            .pool_size
            .or(first.connection_cap)
            .unwrap_or(first.concurrency),
        rate,
        runs: runs.len(),
        duration_s,
        requests,
        errors,
        error_rate: match requests {
            0 => 0.0,
            n => errors as f64 / n as f64,
        },
        errors_by_kind: by_kind,
        throughput_rps: throughput,
        throughput_ci95: ci95,
        throughput_from_latency: from_latency,
        p50_us: latency.p50,
        p99_us: latency.p99,
        mean_us: latency.mean,
        checkout_wait_share: match latency.mean > 0.0 {
            true => (wait / latency.mean).min(1.0),
            false => 0.0,
        },
        stalled_s,
        achieved_in_flight: weighted(runs, |c| c.achieved_concurrency),
        generator_cpu: generator_cpu(runs),
        checkout_wait_p999_us: wait_p999_us(runs),
        hiccup_p99_us: runs
            .iter()
            .map(|c| c.generator_hiccups_us.p99)
            .fold(0.0, f64::max),
        streams_allowed: runs.iter().filter_map(|c| c.pool.stream_limit()).min(),
    }
}

/// The errors of every run, counted by kind.
fn errors_by_kind(runs: &[CellResult]) -> std::collections::BTreeMap<String, u64> {
    let mut by_kind = std::collections::BTreeMap::new();
    for c in runs {
        for (k, n) in &c.errors.by_kind {
            *by_kind.entry(k.clone()).or_insert(0) += n;
        }
    }
    by_kind
}

/// The longest stall over the runs, seconds (the whole window if nothing completed).
fn stalled_seconds(runs: &[CellResult], requests: u64, duration_s: f64) -> f64 {
    match requests {
        // Nothing completed: stalled for the whole window, never a clean zero.
        0 => duration_s,
        _ => runs.iter().map(longest_stall).fold(0.0, f64::max),
    }
}

/// Throughput, its interval, and whether Little's law gave them (a `clean` run).
fn throughput_of(
    runs: &[CellResult],
    latency: &Summary,
    duration_s: f64,
    clean: bool,
) -> (f64, Option<f64>, bool) {
    let ok: u64 = runs.iter().map(|c| c.ok).sum();
    let counted = match duration_s > 0.0 {
        true => ok as f64 / duration_s,
        false => 0.0,
    };
    let little = clean
        .then(|| by_latency(runs[0].concurrency, latency, duration_s / runs.len() as f64))
        .flatten()
        // Every worker cycling: the count agrees, within a window's grain.
        .filter(|(x, _)| (0.6 * x..=1.5 * x).contains(&counted));
    match little {
        Some((x, ci95)) => (x, ci95, true),
        None => (counted, throughput_ci95(runs), false),
    }
}

/// The generator's highest CPU share over the runs that measured it.
fn generator_cpu(runs: &[CellResult]) -> Option<f64> {
    runs.iter()
        .filter_map(|c| c.generator_cpu)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// Services slower than this (mean latency) against a run's window are
/// measured by Little's law: a second holds too few answers to count.
const LATENCY_WINDOWS: f64 = 40.0;

/// Throughput and its interval by Little's law, for a closed loop where
/// every request completed: `workers` ÷ mean latency, the interval the
/// mean's (1.96 standard errors). Only for services slow against the run's
/// window (`window_s`), where counting answers in a window is coarse.
fn by_latency(workers: usize, latency: &Summary, window_s: f64) -> Option<(f64, Option<f64>)> {
    let mean_s = latency.mean / 1e6;
    if latency.count == 0 || mean_s <= 0.0 || LATENCY_WINDOWS * mean_s < window_s {
        return None;
    }
    let x = workers as f64 / mean_s;
    let rel = match latency.count {
        1 => None,
        n => Some(1.96 * latency.stdev / latency.mean / (n as f64).sqrt()),
    };
    Some((x, rel.map(|r| r * x)))
}

/// The longest stretch with requests in flight and no success, seconds,
/// counted within the measured window (and the drain after it): a freeze
/// that began in the warm-up counts from the window's start.
fn longest_stall(c: &CellResult) -> f64 {
    c.timeline
        .stalls(std::time::Duration::from_millis(100))
        .iter()
        .map(|s| s.start_s + s.duration_s - s.start_s.max(0.0))
        .fold(0.0, f64::max)
}

/// A per-cell figure averaged over runs, weighted by their successes.
fn weighted(runs: &[CellResult], f: impl Fn(&CellResult) -> f64) -> f64 {
    let n: u64 = runs.iter().map(|c| c.ok).sum();
    match n {
        0 => 0.0,
        n => runs.iter().map(|c| f(c) * c.ok as f64).sum::<f64>() / n as f64,
    }
}

/// The successes' latency over every run: their histograms added.
/// p99.9 of the checkout wait over the runs, µs (`None` where a
/// histogram cannot be read).
fn wait_p999_us(runs: &[CellResult]) -> Option<f64> {
    let mut h = new_histogram();
    for c in runs {
        let d = decode_histogram(&c.histograms.checkout_wait_ns).ok()?;
        h.add(&d).ok()?;
    }
    Some(h.value_at_quantile(0.999) as f64 / 1000.0)
}

fn merged_latency(runs: &[CellResult]) -> Summary {
    let mut h = new_histogram();
    for c in runs {
        match decode_histogram(&c.histograms.latency_ns) {
            Ok(d) => {
                let _ = h.add(&d);
            }
            Err(_) => return runs[0].latency_us,
        }
    }
    Summary::of(&h)
}

/// Half-width of the throughput's 95% confidence interval, from the batch
/// means of all the runs' timelines (`None` with fewer than two batches).
/// A 100 ms bucket holds the completions of its own 100 ms, so a batch's
/// samples are nearly independent for services answering well under that.
fn throughput_ci95(runs: &[CellResult]) -> Option<f64> {
    let mut batches = Vec::new();
    for c in runs {
        batches.extend(batch_rates(c));
    }
    mean_ci95(&batches).1
}

/// Successes per second in each full batch of the measured window.
pub fn batch_rates(c: &CellResult) -> Vec<f64> {
    let t = &c.timeline;
    let bucket_s = t.bucket_ms.max(1) as f64 / 1000.0;
    let first_run_s = c.duration_s / c.reps.max(1) as f64;
    let n = (first_run_s / bucket_s).floor() as usize;
    let from = t.measure_from_bucket.min(t.ok.len());
    let to = (from + n).min(t.ok.len());
    t.ok[from..to]
        .chunks_exact(BATCH_BUCKETS)
        .map(|b| b.iter().map(|&v| v as f64).sum::<f64>() / (BATCH_BUCKETS as f64 * bucket_s))
        .collect()
}

/// Below this share of the requests in flight asked for (closed loop), the
/// rest were stuck: a point fails.
const ACHIEVED_SHARE: f64 = 0.5;

/// Why a point counts as failing, if it does: errors above the SLO's
/// bound (1% without one), or a stall of at least `stall_s`.
pub fn failure(p: &TunePoint, slo: Option<&Slo>, stall_s: f64) -> Option<Failure> {
    let bound = slo.and_then(|s| s.error_rate).unwrap_or(0.01);
    if p.requests == 0 {
        return Some(Failure::NoAnswer {
            seconds: p.stalled_s.max(p.duration_s),
        });
    }
    if p.error_rate > bound {
        return Some(Failure::Errors {
            rate: p.error_rate,
            kinds: p
                .errors_by_kind
                .iter()
                .map(|(k, n)| (k.clone(), *n))
                .collect(),
        });
    }
    if p.stalled_s >= stall_s {
        return Some(Failure::Stalled {
            seconds: p.stalled_s,
        });
    }
    let asked = p.in_flight.min(p.pool_size.max(1)) as f64;
    if p.rate.is_none() && p.in_flight >= 2 && p.achieved_in_flight < ACHIEVED_SHARE * asked {
        return Some(Failure::Unanswered {
            achieved: p.achieved_in_flight,
            asked: p.in_flight,
        });
    }
    None
}

/// The relative width of a point's confidence interval (∞ without one).
pub fn relative_ci(p: &TunePoint) -> f64 {
    match (p.throughput_ci95, p.throughput_rps > 0.0) {
        (Some(ci), true) => ci / p.throughput_rps,
        _ => f64::INFINITY,
    }
}
