//! The pitfalls section and the recommendation.
use poolbench_engine::RunResult;
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
    if result.pitfalls.is_empty() {
        out.push_str("\nPitfalls: none found\n");
    } else {
        out.push_str("\nPitfalls\n");
        for p in &result.pitfalls {
            let _ = writeln!(out, "  ! {}: {}", p.id, p.title);
            const SHOWN: usize = 6;
            for e in p.evidence.iter().take(SHOWN) {
                let _ = writeln!(out, "      {e}");
            }
            if p.evidence.len() > SHOWN {
                let _ = writeln!(
                    out,
                    "      … and {} more (see the JSON)",
                    p.evidence.len() - SHOWN
                );
            }
        }
    }
    match &result.recommendation {
        Some(r) => {
            let _ = writeln!(out, "\nRecommendation: {} — {}", r.strategy, r.reason);
        }
        None => {
            let why = result
                .no_recommendation
                .as_deref()
                .unwrap_or("no cell qualifies");
            let _ = writeln!(out, "\nRecommendation: none — {why}");
        }
    }
    out
}
