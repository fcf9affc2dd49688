//! Renders what poolbench produced, for people and for programs. It only
//! reads results; it never measures.
//!
//! - A run ([`RunResult`]): [`render_text`] (the tables and findings a
//!   terminal shows), [`render_markdown`], [`render_html`] (a self-contained
//!   page with charts), [`render_csv`], JUnit, Prometheus' exposition format
//!   (the live endpoint), HDR logs.
//! - A tune and a find-rate: [`render_tune_text`] (the answer first, then
//!   the evidence), [`render_tune_html`], [`render_rate_text`],
//!   [`render_rate_html`], [`render_rate_markdown`].
//! - Two results compared: runs cell by cell ([`compare`], with Welch's
//!   t-test), tunes and find-rates figure by figure ([`compare_tunes`],
//!   [`compare_rates`]), and the `--fail-if` bounds ([`parse_bounds`]).
//! - `poolbench explain`: every finding and inference by its id
//!   ([`explain_name`], [`explain_list`], [`explain_markdown`], which is
//!   docs/findings.md).
//!
//! [`RunResult`]: poolbench_model::RunResult
#![forbid(unsafe_code)]

mod advice;
mod bounds;
mod census_text;
mod charts;
mod client_check_text;
mod compare;
mod compare_views;
mod csv;
mod explain;
mod figures;
mod figures_views;
mod fleet;
mod format;
mod grid;
mod html;
mod junit;
mod markdown;
mod open;
mod prometheus;
mod ramp;
mod rate_compare;
mod rate_html;
mod rate_views;
mod skipped;
mod spectrum;
mod summary;
mod table;
mod timeline_chart;
mod tune_compare;
mod tune_figures;
mod tune_fleet;
mod tune_html;
mod tune_text;
mod tune_timeouts;
mod tune_views;
mod tune_words;

use poolbench_model::{LoadModel, RunResult};

pub use bounds::{names_apply, parse_bounds, Bound, BoundCheck, BOUNDABLE};
pub use census_text::render_census_text;
pub use client_check_text::{
    client_check_junit, client_verdict, render_client_check_html, render_client_check_text,
};
pub use compare::{
    bound_checks, compare, comparison_schema, render_comparison, violations, CellChange, Comparison,
};
pub use compare_views::{render_comparison_html, render_comparison_markdown};
pub use csv::render_csv;
pub use explain::{explain_list, explain_markdown, explain_name, explain_text};
pub use figures::{
    figure_checks, figure_comparison_schema, figure_violations, resolution, ChangeIs, Figure,
    FigureComparison, FigureKind, Reading,
};
pub use figures_views::{render_figures_html, render_figures_markdown, render_figures_text};
pub use fleet::{fleet_html, fleet_sentence, fleet_text};
pub use format::{fmt_duration_us, fmt_rate};
pub use html::render_html;
pub use junit::{
    comparison_junit, figures_junit, render_junit, run_junit, started, JunitCase, JunitSuite,
};
pub use markdown::render_markdown;
pub use prometheus::{render_prometheus, Exposition, EXPOSITION_CONTENT_TYPE};
pub use rate_compare::{compare_rates, rate_figures};
pub use rate_html::render_rate_html;
pub use rate_views::{rate_answer, rate_junit, render_rate_markdown, render_rate_text};
pub use spectrum::{hdr_log_name, render_hdr_log, render_spectrum};
pub use table::ties_with_best;
pub use tune_compare::compare_tunes;
pub use tune_figures::tune_figures;
pub use tune_html::render_tune_html;
pub use tune_text::{render_tune_text, tune_answer};
pub use tune_views::{render_tune_csv, render_tune_markdown, tune_junit};

/// A shard's share of its plan, or the shards a merge added up; with
/// the windows' spread.
fn shard_line(result: &RunResult) -> String {
    if let Some(s) = &result.shard {
        let mut line = format!(
            "shard {}/{} of plan {}: its share of each cell (the cells below); `poolbench merge` adds the shards\n",
            s.index,
            s.count,
            &s.plan_hash[..s.plan_hash.len().min(12)]
        );
        for n in &s.notes {
            line.push_str(&format!("  {n}\n"));
        }
        return line;
    }
    let Some(n) = result.merged_shards else {
        return String::new();
    };
    // How far apart the shards started the same cell.
    let spread = result
        .cells
        .iter()
        .filter_map(|c| {
            let starts: Vec<f64> = c.shards.iter().filter_map(|p| p.started_unix_s).collect();
            let lo = starts.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (starts.len() > 1).then_some(hi - lo)
        })
        .fold(0.0, f64::max);
    format!(
        "merged from {n} shards: counts and histograms added; each cell's shards started within {:.1} ms of each other\n",
        spread * 1000.0
    )
}

/// The text report: per concurrency a table of strategies by throughput,
/// then a pool size × concurrency grid per sized strategy.
pub fn render_text(result: &RunResult) -> String {
    let mut out = String::new();
    let mode = match result.config.target_options.query_mode {
        Some(m) => format!(" · query mode {}", m.name()),
        None => String::new(),
    };
    out.push_str(&format!(
        "poolbench {} · target {}{mode} · {} cores ({})\n",
        result.machine.poolbench_version, result.target, result.machine.cores, result.machine.os
    ));
    let c = &result.config;
    let load = match c.requests {
        Some(n) => format!("{n} requests per cell (at most {})", fmt_secs(c.duration)),
        None => format!("{} per cell", fmt_secs(c.duration)),
    };
    let model = match c.load {
        LoadModel::Closed => "closed loop".to_string(),
        LoadModel::Open { rate, arrival } => format!("open loop at {rate} req/s ({arrival:?})"),
        LoadModel::Batch { size, samples } => {
            format!("batches of {size}, at least {samples} samples")
        }
    };
    let reps = if c.reps > 1 {
        format!(" · {} runs per cell", c.reps)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{model} · {load} after {} warm-up · timeout {}{reps}\n",
        fmt_secs(c.warmup),
        fmt_secs(c.timeout)
    ));
    out.push_str(&shard_line(result));
    if let Some(signal) = &result.interrupted {
        let cut: Vec<String> = result
            .cells
            .iter()
            .filter(|c| c.interrupted)
            .map(|c| c.label())
            .collect();
        let cut = match cut.is_empty() {
            true => String::new(),
            false => format!(
                "; {} ended early, its figures up to the stop",
                cut.join(", ")
            ),
        };
        out.push_str(&format!(
            "INTERRUPTED by {signal}: {} of {} cells run{cut}\n",
            result.cells.len(),
            c.cells().len()
        ));
    }
    out.push_str(&skipped::text(result));
    out.push_str(&summary::render(result));
    out.push_str("\nDetails\n-------\n");
    out.push_str(&table::render(result));
    out.push_str(&open::render(result));
    out.push_str(&grid::render(result));
    out.push_str(&ramp::render(result));
    out.push_str(&advice::render(result));
    out
}

/// The whole result as pretty JSON.
pub fn render_json(result: &RunResult) -> String {
    serde_json::to_string_pretty(result).expect("a RunResult always serializes")
}

fn fmt_secs(d: std::time::Duration) -> String {
    fmt_duration_us(d.as_secs_f64() * 1e6)
}
