//! The findings section and the recommendation.
use poolbench_model::{CellResult, Finding, RunResult};
use std::fmt::Write;

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::new();
    if let Some(p) = &result.pipeline {
        let _ = writeln!(
            out,
            "\npipelining probe: {} requests ahead, {:.2} responses per read ({} of {} reads carried several)",
            p.depth, p.mean_per_read, p.batched_reads, p.reads
        );
    }
    if result.findings.is_empty() {
        out.push_str("\nFindings: none\n");
    } else {
        out.push_str("\nFindings\n");
        for p in &result.findings {
            let _ = writeln!(
                out,
                "  ! {}: {} — {}",
                p.id,
                p.title,
                crate::summary::reach(p, result)
            );
            for line in evidence(p, result) {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    if !result.scaling.is_empty() {
        out.push_str(
            "\nScalability (Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)))\n",
        );
        for u in &result.scaling {
            let peak = match u.peak_concurrency {
                Some(n) => format!("peak at N ≈ {n:.0}, {:.0} req/s", u.peak_throughput),
                None => "no peak within reach (κ ≈ 0)".to_string(),
            };
            let _ = writeln!(
                out,
                "  {:<28} σ {:.4}  κ {:.6}  λ {:.0} req/s  {peak}  (R² {:.2})",
                u.strategy, u.sigma, u.kappa, u.lambda, u.r2
            );
        }
    }
    match &result.recommendation {
        Some(r) => {
            let _ = writeln!(out, "\nRecommendation: {} — {}", r.strategy, r.why);
        }
        None => {
            let why = result.reason.as_deref().unwrap_or("no cell qualifies");
            let _ = writeln!(out, "\nRecommendation: none — {why}");
        }
    }
    out
}

/// Lines shown under a finding. A concurrency level where it holds for
/// three cells or more is one line with an example; other lines follow,
/// six at most.
fn evidence(p: &Finding, result: &RunResult) -> Vec<String> {
    const SHOWN: usize = 6;
    let at_level = |line: &str, level: usize| {
        line.split(": ")
            .next()
            .is_some_and(|l| l.ends_with(&format!(" c={level}")))
    };
    let grouped: Vec<(usize, usize, usize)> = crate::summary::levels(p, result)
        .into_iter()
        .filter(|(_, hit, _)| *hit >= 3)
        .collect();
    let mut out = Vec::new();
    if p.cells.len() == result.cells.len() && result.cells.len() >= 3 {
        if let Some(e) = p.evidence.iter().find(|e| !e.is_empty()) {
            out.push(format!("every cell ({}), e.g. {e}", p.cells.len()));
        }
        let lines = p.evidence.len().saturating_sub(p.cells.len());
        out.extend(p.evidence.iter().skip(p.cells.len()).take(lines).cloned());
        return out;
    }
    for (level, hit, all) in &grouped {
        let Some(e) = p.evidence.iter().find(|e| at_level(e, *level)) else {
            continue;
        };
        let which = match hit == all {
            true => format!("every strategy ({all})"),
            false => {
                let (hits, misses): (Vec<&CellResult>, Vec<&CellResult>) = result
                    .cells
                    .iter()
                    .filter(|c| c.concurrency == *level)
                    .partition(|c| p.cells.contains(&c.label()));
                let names = |v: &[&CellResult]| {
                    v.iter()
                        .map(|c| c.strategy.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                match hits.len() > misses.len() {
                    true => format!("{hit} of {all} strategies (all but {})", names(&misses)),
                    false => format!("{hit} of {all} strategies ({})", names(&hits)),
                }
            }
        };
        out.push(format!("c={level}: {which}, e.g. {e}"));
    }
    let rest: Vec<&String> = p
        .evidence
        .iter()
        .filter(|e| !grouped.iter().any(|(level, _, _)| at_level(e, *level)))
        .collect();
    out.extend(rest.iter().take(SHOWN).map(|e| e.to_string()));
    if rest.len() > SHOWN {
        out.push(format!("… and {} more (see the JSON)", rest.len() - SHOWN));
    }
    out
}
