//! Judging points: does one meet the bounds, is it within 5% of the best
//! or tied with it. Shared by the pool search and the confirmation.
use super::point::failure;
use poolbench_model::{Slo, TunePoint};

/// Share of the best throughput a pool must reach.
pub const WITHIN_BEST: f64 = 0.95;

/// Whether a point meets the SLO's bounds (and fails nothing).
pub fn meets(p: &TunePoint, slo: Option<&Slo>, stall_s: f64) -> Result<(), String> {
    if let Some(why) = failure(p, slo, stall_s) {
        return Err(why.to_string());
    }
    let Some(slo) = slo else { return Ok(()) };
    let ms = |us: f64| format!("{:.1} ms", us / 1000.0);
    if let Some(b) = slo.p99_us.filter(|&b| p.p99_us > b) {
        return Err(format!("p99 {} > {}", ms(p.p99_us), ms(b)));
    }
    if let Some(b) = slo.p50_us.filter(|&b| p.p50_us > b) {
        return Err(format!("p50 {} > {}", ms(p.p50_us), ms(b)));
    }
    if let Some(b) = slo.throughput_rps.filter(|&b| p.throughput_rps < b) {
        return Err(format!("{:.0} req/s < {b:.0}", p.throughput_rps));
    }
    Ok(())
}

/// Below this share of the best, overlapping intervals are too wide to
/// call a tie: the points could not be told apart, which is not the same.
const TIE_FLOOR: f64 = 0.9;

/// Within 5% of the best point's throughput, or a tie with it (and within
/// 10%): the smaller pool wins a tie.
pub fn close_to_best(p: &TunePoint, best: &TunePoint) -> bool {
    p.throughput_rps >= WITHIN_BEST * best.throughput_rps
        || (tie(p, best) && p.throughput_rps >= TIE_FLOOR * best.throughput_rps)
}

/// Two points whose throughput intervals overlap (or within 2% without
/// intervals) cannot be told apart.
pub fn tie(a: &TunePoint, b: &TunePoint) -> bool {
    let gap = (a.throughput_rps - b.throughput_rps).abs();
    match (a.throughput_ci95, b.throughput_ci95) {
        (Some(x), Some(y)) => gap <= x + y,
        _ => gap <= 0.02 * a.throughput_rps.max(b.throughput_rps),
    }
}
