//! A saved `tune` in the formats a run has beside text, JSON and HTML:
//! Markdown (the answer, the settings, the capacity curve, the pool
//! search), CSV (every point, a row each) and JUnit (one case: did the
//! search give an answer).
use crate::format::{fmt_duration_us, fmt_rate};
use crate::junit::{started, JunitCase, JunitSuite};
use crate::tune_text::{search_footer, tune_answer};
use poolbench_model::{TunePhase, TunePoint, TuneResult};
use poolbench_tune::capacity_points;
use std::fmt::Write;

/// The tune as Markdown.
pub fn render_tune_markdown(r: &TuneResult) -> String {
    let mut t = format!("# poolbench tune · {}\n\n{}\n\n", r.target, tune_answer(r));
    if let Some(p) = &r.recommendation {
        t.push_str("| client | setting |\n|---|---|\n");
        for s in &p.client_settings {
            let _ = writeln!(t, "| {} | `{}` |", s.client, s.setting.replace('|', "\\|"));
        }
        t.push('\n');
    }
    if !r.inferences.is_empty() {
        t.push_str("## What the search saw\n\n");
        for i in &r.inferences {
            let _ = writeln!(t, "- **{}**: {}", i.text, i.evidence);
        }
        t.push('\n');
    }
    let levels = capacity_points(&r.points);
    if !levels.is_empty() {
        t.push_str("## Capacity (one connection per request in flight)\n\n");
        table(&mut t, levels.into_iter());
    }
    let pool = r
        .points
        .iter()
        .filter(|p| matches!(p.phase, TunePhase::Pool | TunePhase::Confirm));
    if pool.clone().next().is_some() {
        t.push_str("## Pool search at the client's load\n\n");
        table(&mut t, pool);
    }
    t.push_str(&search_footer(r).replace('\n', "\n\n"));
    t
}

fn table<'a>(t: &mut String, points: impl Iterator<Item = &'a TunePoint>) {
    t.push_str("| phase | strategy | in flight | req/s | ±95% | p99 | errors | runs |\n");
    t.push_str("|---|---|--:|--:|--:|--:|--:|--:|\n");
    for p in points {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {:.1}% | {} |",
            phase(p.phase),
            p.strategy,
            p.in_flight,
            fmt_rate(p.throughput_rps),
            p.throughput_ci95.map_or("–".into(), fmt_rate),
            fmt_duration_us(p.p99_us),
            p.error_rate * 100.0,
            p.runs
        );
    }
    t.push('\n');
}

fn phase(p: TunePhase) -> &'static str {
    match p {
        TunePhase::Capacity => "capacity",
        TunePhase::Recovery => "recovery",
        TunePhase::Pool => "pool",
        TunePhase::Confirm => "confirm",
    }
}

/// Every point of the tune, a CSV row each.
pub fn render_tune_csv(r: &TuneResult) -> String {
    let mut t = String::from(
        "phase,strategy,in_flight,pool_size,runs,duration_s,requests,errors,throughput_rps,throughput_ci95,p50_us,p99_us,mean_us,stalled_s,checkout_wait_share\n",
    );
    for p in &r.points {
        let _ = writeln!(
            t,
            "{},{},{},{},{},{:.3},{},{},{:.3},{},{:.1},{:.1},{:.1},{:.3},{:.4}",
            phase(p.phase),
            p.strategy,
            p.in_flight,
            p.pool_size,
            p.runs,
            p.duration_s,
            p.requests,
            p.errors,
            p.throughput_rps,
            p.throughput_ci95
                .map_or(String::new(), |c| format!("{c:.3}")),
            p.p50_us,
            p.p99_us,
            p.mean_us,
            p.stalled_s,
            p.checkout_wait_share
        );
    }
    t
}

/// The tune as one JUnit case: it passes when a pool was recommended.
pub fn tune_junit(r: &TuneResult) -> Vec<JunitSuite> {
    let measured = match &r.recommendation {
        Some(p) => format!("{} at {} req/s", p.spec, fmt_rate(p.throughput_rps)),
        None => "no pool".into(),
    };
    vec![JunitSuite {
        name: format!("poolbench tune {}", r.target),
        started: started(&r.started_at),
        cases: vec![JunitCase {
            class: "tune".into(),
            name: "a pool is recommended".into(),
            measured,
            failure: r
                .recommendation
                .is_none()
                .then(|| r.reason.clone().unwrap_or_else(|| "no answer".into())),
            seconds: r.elapsed_s,
        }],
    }]
}
