//! What a reader needs first: the recommendation, the findings that change
//! the decision, the best strategy per concurrency. And the findings'
//! reach, so a finding that holds for every cell is one line, not forty.
use crate::format::fmt_rate;
use crate::table::versus;
use poolbench_model::{CellResult, Finding, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Findings shown in the summary.
const LEADING: usize = 3;

/// Findings by how much they change the decision ([`Id::rank`](poolbench_model::findings::Id::rank)), the
/// details last.
fn weight(p: &Finding) -> usize {
    p.id.rank().unwrap_or(usize::MAX)
}

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::from("\nSummary\n");
    match (&result.recommendation, &result.reason) {
        (Some(r), _) => {
            let _ = writeln!(
                out,
                "  Recommendation: {} (at c={})",
                r.strategy, r.concurrency
            );
        }
        (None, why) => {
            let _ = writeln!(
                out,
                "  Recommendation: none — {}",
                why.as_deref().unwrap_or("no cell qualifies")
            );
        }
    }
    let mut ranked: Vec<&Finding> = result.findings.iter().collect();
    ranked.sort_by_key(|p| weight(p));
    let (leading, rest) = ranked.split_at(ranked.len().min(LEADING));
    for p in leading.iter().filter(|p| p.id.rank().is_some()) {
        let _ = writeln!(out, "  ! {}: {} — {}", p.id, p.title, reach(p, result));
    }
    let others: Vec<String> = leading
        .iter()
        .filter(|p| p.id.rank().is_none())
        .chain(rest)
        .map(|p| match p.cells.len() {
            0 => p.id.to_string(),
            n if n == result.cells.len() => format!("{} (every cell)", p.id),
            n => format!("{} ({n} of {} cells)", p.id, result.cells.len()),
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(out, "  also: {}", others.join("; "));
    }
    if result.findings.is_empty() {
        out.push_str("  no findings\n");
    }
    out.push_str("  best per concurrency:\n");
    for (level, cells) in by_level(result) {
        let _ = writeln!(out, "    c={level:<6} {}", best(&cells));
    }
    out
}

/// The strategies at each concurrency, best first.
fn by_level(result: &RunResult) -> BTreeMap<usize, Vec<&CellResult>> {
    let mut m: BTreeMap<usize, Vec<&CellResult>> = BTreeMap::new();
    for c in &result.cells {
        m.entry(c.concurrency).or_default().push(c);
    }
    for cells in m.values_mut() {
        cells.sort_by(|a, b| b.throughput_rps.total_cmp(&a.throughput_rps));
    }
    m
}

/// "pool:16 4,170 req/s, tied with a, b", "…, 8 others tie (all but x)"
/// or "all 10 strategies tie (best …)".
fn best(cells: &[&CellResult]) -> String {
    let top = cells[0];
    let (tied, behind): (Vec<&CellResult>, Vec<&CellResult>) = cells[1..]
        .iter()
        .partition(|c| versus(c, top).starts_with("tie"));
    let head = format!("{} {} req/s", top.strategy, fmt_rate(top.throughput_rps));
    let names = |v: &[&CellResult]| {
        v.iter()
            .map(|c| c.strategy.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (tied.len(), behind.len()) {
        (0, _) => head,
        (n, 0) if n > 1 => format!("all {} strategies tie (best {head})", cells.len()),
        (n, b) if n > 3 && b < n => {
            format!("{head}, {n} others tie (all but {})", names(&behind))
        }
        _ => format!("{head}, tied with {}", names(&tied)),
    }
}

/// Where a finding holds: "every cell (40)", "the run", or "14 of 40
/// cells (c=1: 9 of 10, c=100: 5 of 10)".
pub(crate) fn reach(p: &Finding, result: &RunResult) -> String {
    let total = result.cells.len();
    if p.cells.is_empty() {
        return "the run".to_string();
    }
    if p.cells.len() >= total {
        return format!("every cell ({total})");
    }
    let levels: Vec<String> = levels(p, result)
        .into_iter()
        .filter(|(_, hit, _)| *hit > 0)
        .map(|(level, hit, all)| format!("c={level}: {hit} of {all}"))
        .collect();
    format!("{} of {total} cells ({})", p.cells.len(), levels.join(", "))
}

/// Per concurrency level: the cells the finding holds for, and all cells.
pub(crate) fn levels(p: &Finding, result: &RunResult) -> Vec<(usize, usize, usize)> {
    let mut at: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for c in &result.cells {
        let e = at.entry(c.concurrency).or_default();
        e.1 += 1;
        if p.cells.contains(&c.label()) {
            e.0 += 1;
        }
    }
    at.into_iter()
        .map(|(level, (hit, all))| (level, hit, all))
        .collect()
}
