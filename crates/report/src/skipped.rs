//! The cells `--stop-on-slo` did not run, in each format: one line per
//! reason (a strategy and the two cells that broke the SLO), with the
//! cells it left out.
use crate::format::esc;
use poolbench_model::RunResult;
use std::fmt::Write;

/// Each reason once, in the order first given, with the levels it
/// skipped (`c=128, c=256`).
fn by_reason(result: &RunResult) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, Vec<String>)> = Vec::new();
    for s in &result.skipped {
        let level = format!("c={}", s.concurrency);
        match out.iter_mut().find(|(reason, _)| *reason == s.reason) {
            Some((_, levels)) => levels.push(level),
            None => out.push((&s.reason, vec![level])),
        }
    }
    out.into_iter()
        .map(|(reason, levels)| (reason, levels.join(", ")))
        .collect()
}

/// "2 of 6 cells": those skipped among all the grid's.
fn count(result: &RunResult) -> String {
    let all = result.cells.len() + result.skipped.len();
    format!("{} of {all} cells", result.skipped.len())
}

/// Text: a heading line and one line per reason; nothing when no cell
/// was skipped.
pub(crate) fn text(result: &RunResult) -> String {
    if result.skipped.is_empty() {
        return String::new();
    }
    let mut out = format!("SKIPPED by --stop-on-slo: {} not run\n", count(result));
    for (reason, levels) in by_reason(result) {
        let _ = writeln!(out, "  {reason}: skipped {levels}");
    }
    out
}

/// Markdown: a bold line and a list.
pub(crate) fn markdown(result: &RunResult) -> String {
    if result.skipped.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "**Skipped by `--stop-on-slo`:** {} not run\n\n",
        count(result)
    );
    for (reason, levels) in by_reason(result) {
        let _ = writeln!(out, "- {reason}: skipped {levels}");
    }
    out.push('\n');
    out
}

/// HTML: a section with a list.
pub(crate) fn html(result: &RunResult) -> String {
    if result.skipped.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h2>Skipped</h2>\n<p>--stop-on-slo: {} not run.</p><ul>",
        count(result)
    );
    for (reason, levels) in by_reason(result) {
        let _ = write!(out, "<li>{}: skipped {}</li>", esc(reason), esc(&levels));
    }
    out.push_str("</ul>\n");
    out
}
