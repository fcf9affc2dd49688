//! Open-loop cells: asked against achieved, and latency with and without
//! the correction for coordinated omission.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_engine::RunResult;
use std::fmt::Write;

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let open: Vec<_> = result
        .cells
        .iter()
        .filter(|c| c.requested_rate.is_some())
        .collect();
    if open.is_empty() {
        return out;
    }
    out.push_str(
        "\nopen loop: latency from the intended send (corrected) and from the actual send\n",
    );
    let _ = writeln!(
        out,
        "  {:<20} {:>10} {:>10} {:>7} {:>7} {:>11} {:>11}",
        "strategy", "asked/s", "achieved/s", "late", "dropped", "p99", "p99 uncorr."
    );
    for c in open {
        let uncorrected = c.latency_uncorrected_us.map_or(0.0, |s| s.p99);
        let _ = writeln!(
            out,
            "  {:<20} {:>10} {:>10} {:>7} {:>7} {:>11} {:>11}",
            c.strategy,
            fmt_rate(c.requested_rate.unwrap_or(0.0)),
            fmt_rate(c.achieved_rate),
            c.late,
            c.dropped,
            fmt_duration_us(c.latency_us.p99),
            fmt_duration_us(uncorrected),
        );
    }
    out
}
