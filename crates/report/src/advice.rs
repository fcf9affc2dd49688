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
