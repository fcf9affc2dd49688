//! Open-loop cells: asked against achieved, latency with and without the
//! correction for coordinated omission, and the generator's own error: how
//! late the pacer sent (send lag) and how late a 1 ms sleep woke (hiccups).
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_model::RunResult;
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
    for c in &open {
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
    out.push_str("  the generator's own error: send lag (sent after the intended time) and hiccups (a 1 ms sleep woke late)\n");
    let _ = writeln!(
        out,
        "  {:<20} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
        "strategy", "lag p50", "lag p99", "lag max", "hiccup p99", "p99.9", "max"
    );
    for c in &open {
        let lag = c.send_lag_us.unwrap_or_default();
        let h = &c.generator_hiccups_us;
        let _ = writeln!(
            out,
            "  {:<20} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
            c.strategy,
            fmt_duration_us(lag.p50),
            fmt_duration_us(lag.p99),
            fmt_duration_us(lag.max),
            fmt_duration_us(h.p99),
            fmt_duration_us(h.p999),
            fmt_duration_us(h.max),
        );
    }
    out
}
