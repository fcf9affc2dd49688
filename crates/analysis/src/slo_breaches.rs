//! Which of the SLO's bounds (`--slo`) a cell broke.
use poolbench_model::{CellResult, Slo};

/// The bounds `c` breaks, each with its figure; empty when it meets
/// them all.
pub fn breaches(slo: &Slo, c: &CellResult) -> Vec<String> {
    let mut out = Vec::new();
    let ms = |us: f64| format!("{:.1} ms", us / 1000.0);
    if let Some(max) = slo.p99_us.filter(|&m| c.latency_us.p99 > m) {
        out.push(format!("p99 {} > {}", ms(c.latency_us.p99), ms(max)));
    }
    if let Some(max) = slo.p50_us.filter(|&m| c.latency_us.p50 > m) {
        out.push(format!("p50 {} > {}", ms(c.latency_us.p50), ms(max)));
    }
    if let Some(max) = slo.error_rate.filter(|&m| c.error_rate() > m) {
        out.push(format!(
            "errors {:.2}% > {:.2}%",
            c.error_rate() * 100.0,
            max * 100.0
        ));
    }
    if let Some(min) = slo.throughput_rps.filter(|&m| c.throughput_rps < m) {
        out.push(format!(
            "throughput {:.0} < {min:.0} req/s",
            c.throughput_rps
        ));
    }
    out
}
