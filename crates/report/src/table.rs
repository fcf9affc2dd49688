//! Per concurrency level: strategies sorted by throughput, against the best.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_model::{CellResult, RunResult};
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
            "  {:<20} {:>15} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>6}  vs best",
            "strategy",
            "req/s",
            "mean",
            "p50",
            "p99",
            "wait p99",
            "connect",
            "errors",
            "conns",
            "peak",
        );
        for cell in &cells {
            let _ = writeln!(
                out,
                "  {:<20} {:>15} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6.2}% {:>6} {:>6}  {}",
                cell.strategy,
                rate_with_ci(cell),
                fmt_duration_us(cell.latency_us.mean),
                fmt_duration_us(cell.latency_us.p50),
                fmt_duration_us(cell.latency_us.p99),
                fmt_duration_us(cell.checkout_wait_us.p99),
                connect_p50(cell),
                cell.error_rate() * 100.0,
                cell.connections.opened,
                cell.connections.peak_open,
                versus(cell, best),
            );
        }
        for cell in cells.iter().filter(|c| c.errors.total > 0) {
            let _ = writeln!(
                out,
                "    {:<18} errors: {}",
                cell.strategy,
                error_breakdown(cell)
            );
        }
    }
    out
}

/// Median connect time of the connects done during checkouts, or "-".
fn connect_p50(cell: &CellResult) -> String {
    if cell.connect_us.count > 0 {
        fmt_duration_us(cell.connect_us.p50)
    } else {
        "-".to_string()
    }
}

/// "status 30 (500: 30), timeout 2".
fn error_breakdown(cell: &CellResult) -> String {
    let mut parts: Vec<String> = cell
        .errors
        .by_kind
        .iter()
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    if !cell.errors.by_status.is_empty() {
        let codes: Vec<String> = cell
            .errors
            .by_status
            .iter()
            .map(|(code, n)| match cell.errors.messages.get(code) {
                Some(m) => {
                    let m = m.strip_suffix(&format!(" ({code})")).unwrap_or(m);
                    format!("{code}: {n} \"{m}\"")
                }
                None => format!("{code}: {n}"),
            })
            .collect();
        parts.push(format!("by code {}", codes.join(", ")));
    }
    parts.join(", ")
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

/// `cell` is the best or ties with it, as the tables say.
pub fn ties_with_best(cell: &CellResult, best: &CellResult) -> bool {
    let v = versus(cell, best);
    v == "best" || v.starts_with("tie")
}

/// Throughputs this close count as a tie when there are no confidence
/// intervals to compare (one sample per cell).
const TIE: f64 = 0.05;

/// "best", "tie (within 5%)" or "tie (intervals overlap)", or "1.30x
/// slower +41.7 ms" (throughput ratio, mean latency gap).
pub(crate) fn versus(cell: &CellResult, best: &CellResult) -> String {
    if std::ptr::eq(cell, best) {
        return "best".to_string();
    }
    if cell.throughput_rps <= 0.0 {
        return "no successful requests".to_string();
    }
    match (cell.throughput_ci95, best.throughput_ci95) {
        (Some(a), Some(b))
            if a > 0.0 && b > 0.0 && cell.throughput_rps + a >= best.throughput_rps - b =>
        {
            return "tie (intervals overlap)".to_string();
        }
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => {}
        _ if cell.throughput_rps >= (1.0 - TIE) * best.throughput_rps => {
            return "tie (within 5%)".to_string();
        }
        _ => {}
    }
    let ratio = best.throughput_rps / cell.throughput_rps;
    let gap = cell.latency_us.mean - best.latency_us.mean;
    let sign = if gap >= 0.0 { "+" } else { "-" };
    format!("{ratio:.2}x slower {sign}{}", fmt_duration_us(gap.abs()))
}
