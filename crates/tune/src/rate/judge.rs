//! One rate point judged from its cell: within the SLO, and sustained.
//!
//! Sustained (Karimov et al., ICDE 2018: no continuously rising backlog):
//! the backlog, arrivals due minus completions, fitted by a line over the
//! hold, must not rise by more than 1% of the rate a second; and the last
//! third of the hold must not be both slower (p99) and fuller (requests in
//! flight) than the first. A point 3% over the service's capacity can
//! keep its p99 under the SLO for seconds while its queue grows: the
//! backlog says so long before the p99 does.
use poolbench_analysis::findings::generator_saturated;
use poolbench_model::format::ms;
use poolbench_model::{
    decode_histogram, new_histogram, percentile_of, CellResult, RatePhase, RatePoint, RateVerdict,
    Slo,
};

/// The backlog may rise by this share of the rate a second (noise) …
pub const GROWTH_SHARE: f64 = 0.01;
/// … and by at least this many requests over the hold before it counts.
const GROWTH_LEAST: f64 = 5.0;
/// Late against early: slower and fuller by this factor is a queue
/// building (Karimov; 1.25 as the anchors propose).
const LATE_FACTOR: f64 = 1.25;
/// … and only when the p99 rose by this share of the tightest latency
/// bound (this many µs without one) …
const LATE_RISE_OF_BOUND: f64 = 0.1;
const LATE_RISE_US: f64 = 1_000.0;
/// … and the requests in flight by more than this many.
const LATE_RISE_IN_FLIGHT: f64 = 4.0;
/// Without an error bound in the SLO, more errors than this fail a point.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;

/// The trend of one hold: the backlog's growth and the late third against
/// the early one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Trend {
    pub growth_rps: f64,
    pub early_p99_us: f64,
    pub late_p99_us: f64,
    pub early_in_flight: f64,
    pub late_in_flight: f64,
}

/// The point measured at `rate` with at most `cap` in flight in `cell`,
/// with its verdict.
pub fn judge(
    phase: RatePhase,
    (rate, cap): (f64, usize),
    cell: &CellResult,
    slo: &Slo,
) -> RatePoint {
    let trend = trend(rate, cell);
    let (verdict, mut why) = verdict(rate, cell, slo, &trend);
    // The client held requests back: say so, as a pool of `cap` would.
    if let Some(w) = why
        .as_mut()
        .filter(|_| trend.late_in_flight >= 0.95 * cap as f64)
    {
        w.push_str(&format!(
            " (requests in flight at the cap of {cap}: the rest waited to be sent)"
        ));
    }
    let lat = &cell.latency_us;
    RatePoint {
        phase,
        rate_rps: rate,
        in_flight_cap: cap,
        held_s: cell.duration_s,
        requests: cell.requests,
        errors: cell.errors.total + cell.dropped,
        errors_by_kind: errors_by_kind(cell),
        completed_rps: match cell.duration_s > 0.0 {
            true => cell.requests as f64 / cell.duration_s,
            false => 0.0,
        },
        p50_us: lat.p50,
        p90_us: lat.p90,
        p99_us: lat.p99,
        p999_us: lat.p999,
        mean_us: lat.mean,
        backlog_growth_rps: trend.growth_rps,
        early_p99_us: trend.early_p99_us,
        late_p99_us: trend.late_p99_us,
        early_in_flight: trend.early_in_flight,
        late_in_flight: trend.late_in_flight,
        connections: cell.connections.peak_open,
        send_lag_p99_us: cell.send_lag_us.as_ref().map_or(0.0, |s| s.p99),
        generator_cpu: cell.generator_cpu,
        verdict,
        why,
    }
}

/// The cell's errors by kind, with the requests never sent (a timeout
/// behind schedule) as `dropped`.
fn errors_by_kind(cell: &CellResult) -> std::collections::BTreeMap<String, u64> {
    let mut kinds = cell.errors.by_kind.clone();
    if cell.dropped > 0 {
        *kinds.entry("dropped".into()).or_insert(0) += cell.dropped;
    }
    kinds
}

/// The first broken check, in order: nothing answered, the generator's
/// own limit, errors, a latency bound, the trend.
fn verdict(rate: f64, cell: &CellResult, slo: &Slo, t: &Trend) -> (RateVerdict, Option<String>) {
    if cell.requests == 0 {
        let why = format!("no request completed in {:.1} s", cell.duration_s);
        return (RateVerdict::NoAnswer, Some(why));
    }
    let failed = errors(cell, slo)
        .map(|w| (RateVerdict::Errors, w))
        .or_else(|| latency(cell, slo).map(|w| (RateVerdict::Latency, w)))
        .or_else(|| {
            unsustained(rate, cell.duration_s, t, slo).map(|w| (RateVerdict::NotSustained, w))
        });
    let Some((verdict, why)) = failed else {
        return (RateVerdict::Holds, None);
    };
    // A failure while poolbench had no core left is its own, not the
    // service's: the point says nothing.
    if let Some(cpu) = cell
        .generator_cpu
        .filter(|&c| generator_saturated::saturated(c, None))
    {
        let why = format!(
            "poolbench used {:.0}% of the cores and could not send at {} req/s ({why})",
            100.0 * cpu,
            poolbench_model::format::thousands(rate)
        );
        return (RateVerdict::GeneratorLimited, Some(why));
    }
    (verdict, Some(why))
}

fn errors(cell: &CellResult, slo: &Slo) -> Option<String> {
    let bound = slo.error_rate.unwrap_or(DEFAULT_ERROR_RATE);
    let failed = cell.errors.total + cell.dropped;
    let share = failed as f64 / (cell.requests + cell.dropped).max(1) as f64;
    (share > bound).then(|| {
        let kinds: Vec<String> = errors_by_kind(cell)
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        format!(
            "{:.2}% errors > {:.2}% ({})",
            100.0 * share,
            100.0 * bound,
            kinds.join(", ")
        )
    })
}

fn latency(cell: &CellResult, slo: &Slo) -> Option<String> {
    slo.latency_bounds().into_iter().find_map(|(name, bound)| {
        let got = percentile_of(&cell.latency_us, name);
        (got > bound).then(|| format!("{name} {} > {}", ms(got), ms(bound)))
    })
}

/// Why the hold was not sustained, if it was not. Late against early
/// counts only when it matters: the p99 rose by a tenth of the tightest
/// latency bound (1 ms without one) and the requests in flight by 4 (a
/// p99 of 1.6 ms becoming 2.5 ms under a 100 ms bound, 2 in flight
/// becoming 3, is no queue building).
fn unsustained(rate: f64, held_s: f64, t: &Trend, slo: &Slo) -> Option<String> {
    let grows = t.growth_rps > (GROWTH_SHARE * rate).max(GROWTH_LEAST / held_s.max(0.1));
    let tightest = slo
        .latency_bounds()
        .into_iter()
        .map(|(_, b)| b)
        .fold(f64::MAX, f64::min);
    let p99_floor = match tightest < f64::MAX {
        true => LATE_RISE_OF_BOUND * tightest,
        false => LATE_RISE_US,
    };
    let building = t.late_p99_us > LATE_FACTOR * t.early_p99_us
        && t.late_p99_us - t.early_p99_us > p99_floor
        && t.late_in_flight > LATE_FACTOR * t.early_in_flight.max(1.0)
        && t.late_in_flight - t.early_in_flight > LATE_RISE_IN_FLIGHT;
    match (grows, building) {
        (true, _) => Some(format!(
            "the backlog grew {:.0} req/s ({} in flight early, {} late; p99 {} early, {} late)",
            t.growth_rps,
            one_decimal(t.early_in_flight),
            one_decimal(t.late_in_flight),
            ms(t.early_p99_us),
            ms(t.late_p99_us)
        )),
        (false, true) => Some(format!(
            "the last third was slower and fuller than the first (p99 {} against {}, {} in flight against {})",
            ms(t.late_p99_us),
            ms(t.early_p99_us),
            one_decimal(t.late_in_flight),
            one_decimal(t.early_in_flight)
        )),
        (false, false) => None,
    }
}

fn one_decimal(x: f64) -> String {
    format!("{x:.1}")
}

/// The backlog's slope over the measured buckets of the timeline, and the
/// first third against the last.
pub fn trend(rate: f64, cell: &CellResult) -> Trend {
    let t = &cell.timeline;
    let bucket_s = t.bucket_ms.max(1) as f64 / 1000.0;
    let from = t.measure_from_bucket.min(t.ok.len());
    let n = ((cell.duration_s / bucket_s).round() as usize).min(t.ok.len() - from);
    let done: Vec<f64> = (from..from + n)
        .map(|i| (t.ok[i] + t.errors.get(i).copied().unwrap_or(0)) as f64)
        .collect();
    let mut backlog = Vec::with_capacity(n);
    let mut due_minus_done = 0.0;
    for d in &done {
        due_minus_done += rate * bucket_s - d;
        backlog.push(due_minus_done);
    }
    let inflight: Vec<f64> = (from..from + n)
        .map(|i| t.inflight.get(i).copied().unwrap_or(0) as f64)
        .collect();
    let third = (n / 3).max(1).min(n);
    let (early_p99_us, late_p99_us) = p99_early_late(cell);
    Trend {
        growth_rps: slope(&backlog) / bucket_s,
        early_p99_us,
        late_p99_us,
        early_in_flight: mean(&inflight[..third.min(inflight.len())]),
        late_in_flight: mean(&inflight[inflight.len().saturating_sub(third)..]),
    }
}

/// p99 of the first and the last third of the hold's seconds (the whole
/// hold's for both when it had fewer than two seconds).
fn p99_early_late(cell: &CellResult) -> (f64, f64) {
    let seconds = &cell.latency_intervals;
    if seconds.len() < 2 {
        return (cell.latency_us.p99, cell.latency_us.p99);
    }
    let third = (seconds.len() / 3).max(1);
    let p99 = |part: &[poolbench_model::LatencyInterval]| {
        let mut h = new_histogram();
        for s in part {
            if let Ok(one) = decode_histogram(&s.latency_ns) {
                let _ = h.add(&one);
            }
        }
        match h.is_empty() {
            true => 0.0,
            false => h.value_at_quantile(0.99) as f64 / 1000.0,
        }
    };
    (
        p99(&seconds[..third]),
        p99(&seconds[seconds.len() - third..]),
    )
}

/// Least-squares slope of `ys` against their index.
fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let mx = (n - 1.0) / 2.0;
    let my = mean(ys);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    sxy / sxx
}

fn mean(xs: &[f64]) -> f64 {
    match xs.len() {
        0 => 0.0,
        n => xs.iter().sum::<f64>() / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(early: (f64, f64), late: (f64, f64)) -> Trend {
        Trend {
            growth_rps: 0.0,
            early_p99_us: early.0,
            late_p99_us: late.0,
            early_in_flight: early.1,
            late_in_flight: late.1,
        }
    }

    #[test]
    fn late_against_early_counts_only_a_rise_that_matters_to_the_slo() {
        let slo: Slo = "p99<100ms".parse().unwrap();
        // nginx at 98,000 req/s: 1.6 ms → 2.5 ms, 2 → 3 in flight.
        let small = trend((1_600.0, 2.1), (2_500.0, 3.0));
        assert_eq!(unsustained(98_000.0, 6.0, &small, &slo), None);
        // A queue building: 20 ms → 60 ms, 24 → 70 in flight.
        let queue = trend((20_000.0, 24.0), (60_000.0, 70.0));
        let why = unsustained(1_100.0, 6.0, &queue, &slo).unwrap();
        assert!(
            why.starts_with("the last third was slower and fuller"),
            "{why}"
        );
        // The backlog growing says so whatever the thirds.
        let grows = Trend {
            growth_rps: 40.0,
            ..small
        };
        assert!(unsustained(1_100.0, 6.0, &grows, &slo)
            .unwrap()
            .starts_with("the backlog grew"));
    }
}
