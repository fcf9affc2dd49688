//! Markdown: the classic tables of pool experiments, to paste into a README
//! or a pull request: the recommendation, per concurrency a comparison of
//! the strategies ("1.30x slower +41.7 ms"), the pool size × concurrency
//! grid (req/s and error %), and the findings.
use crate::format::{fmt_duration_us, fmt_rate};
use crate::table::versus;
use poolbench_model::{CellResult, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The result as Markdown.
pub fn render_markdown(result: &RunResult) -> String {
    let mut out = format!("## poolbench · {}\n\n", result.target);
    match (&result.recommendation, &result.reason) {
        (Some(r), _) => {
            let _ = writeln!(out, "**Recommendation: {}** — {}\n", r.strategy, r.why);
        }
        (None, Some(why)) => {
            let _ = writeln!(out, "**No recommendation:** {why}\n");
        }
        _ => {}
    }
    out.push_str(&crate::skipped::markdown(result));
    let mut by_level: BTreeMap<usize, Vec<&CellResult>> = BTreeMap::new();
    for c in &result.cells {
        by_level.entry(c.concurrency).or_default().push(c);
    }
    for (level, cells) in &by_level {
        let best = cells
            .iter()
            .copied()
            .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps));
        let _ = writeln!(
            out,
            "### c={level}\n\n| strategy | req/s | mean | p99 | errors | vs best |\n|---|---:|---:|---:|---:|---|"
        );
        for c in cells {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.2}% | {} |",
                c.strategy,
                fmt_rate(c.throughput_rps),
                fmt_duration_us(c.latency_us.mean),
                fmt_duration_us(c.latency_us.p99),
                c.error_rate() * 100.0,
                best.map_or(String::new(), |b| versus(c, b))
            );
        }
        out.push('\n');
    }
    grid(&mut out, result, &by_level);
    if !result.findings.is_empty() {
        out.push_str("### Findings\n\n");
        for p in &result.findings {
            let first = p.evidence.first().map(String::as_str).unwrap_or("");
            let _ = writeln!(out, "- **{}**: {} — {first}", p.id, p.title);
        }
    }
    out
}

/// Pool size × concurrency for each sized strategy.
fn grid(out: &mut String, result: &RunResult, by_level: &BTreeMap<usize, Vec<&CellResult>>) {
    let mut sized: Vec<&str> = result
        .cells
        .iter()
        .filter(|c| c.pool_size.is_some())
        .map(|c| c.strategy.as_str())
        .collect();
    sized.dedup();
    if sized.is_empty() {
        return;
    }
    let levels: Vec<usize> = by_level.keys().copied().collect();
    out.push_str("### req/s (error %) by pool size × concurrency\n\n| pool \\ c |");
    for c in &levels {
        let _ = write!(out, " {c} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(levels.len()));
    out.push('\n');
    let mut rows: Vec<&str> = sized.clone();
    rows.sort_unstable();
    rows.dedup();
    for s in rows {
        let _ = write!(out, "| {s} |");
        for c in &levels {
            let cell = result
                .cells
                .iter()
                .find(|x| x.strategy == s && x.concurrency == *c);
            let _ = match cell {
                Some(x) => write!(
                    out,
                    " {} ({:.1}%) |",
                    fmt_rate(x.throughput_rps),
                    x.error_rate() * 100.0
                ),
                None => write!(out, " - |"),
            };
        }
        out.push('\n');
    }
    out.push('\n');
}
