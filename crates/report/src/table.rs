//! Per concurrency level: strategies sorted by throughput, against the best.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_engine::{CellResult, RunResult};
use std::fmt::Write;

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let mut levels: Vec<usize> = result.cells.iter().map(|c| c.concurrency).collect();
    levels.sort_unstable();
    levels.dedup();
    for c in levels {
        let mut cells: Vec<&CellResult> =
            result.cells.iter().filter(|x| x.concurrency == c).collect();
        cells.sort_by(|a, b| b.throughput_rps.total_cmp(&a.throughput_rps));
        let best = cells[0];
        let _ = writeln!(out, "\nconcurrency {c}");
        let _ = writeln!(
            out,
            "  {:<20} {:>15} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>6}  vs best",
            "strategy", "req/s", "mean", "p50", "p99", "wait p99", "errors", "conns", "peak",
        );
        for cell in &cells {
            let _ = writeln!(
                out,
                "  {:<20} {:>15} {:>9} {:>9} {:>9} {:>9} {:>6.2}% {:>6} {:>6}  {}",
                cell.strategy,
                rate_with_ci(cell),
                fmt_duration_us(cell.latency_us.mean),
                fmt_duration_us(cell.latency_us.p50),
                fmt_duration_us(cell.latency_us.p99),
                fmt_duration_us(cell.checkout_wait_us.p99),
                cell.error_rate() * 100.0,
                cell.connections.opened,
                cell.connections.peak_open,
                versus(cell, best),
            );
        }
    }
    out
}

/// Throughput, with its 95% confidence interval when there is one.
fn rate_with_ci(cell: &CellResult) -> String {
    match cell.throughput_ci95 {
        Some(ci) if cell.throughput_rps > 0.0 => {
            format!(
                "{} ±{:.0}%",
                fmt_rate(cell.throughput_rps),
                ci / cell.throughput_rps * 100.0
            )
        }
        _ => fmt_rate(cell.throughput_rps),
    }
}

/// "best", or "1.30x slower +41.7 ms" (throughput ratio, mean latency gap).
pub(crate) fn versus(cell: &CellResult, best: &CellResult) -> String {
    if std::ptr::eq(cell, best) {
        return "best".to_string();
    }
    if cell.throughput_rps <= 0.0 {
        return "no successful requests".to_string();
    }
    let ratio = best.throughput_rps / cell.throughput_rps;
    let gap = cell.latency_us.mean - best.latency_us.mean;
    let sign = if gap >= 0.0 { "+" } else { "-" };
    format!("{ratio:.2}x slower {sign}{}", fmt_duration_us(gap.abs()))
}
