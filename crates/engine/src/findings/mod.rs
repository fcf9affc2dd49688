//! Reading a finished run: the pitfalls that make its numbers lie, and the
//! pool size worth using. Pure functions of the result.
//!
//! One pitfall is one file: its id, its title and a function of the run
//! that returns its evidence ([`Check`]), listed once in [`CHECKS`]. The
//! text report, the JSON and the HTML read the same list; ids are stable.
use crate::load::LoadModel;
use crate::result::{CellResult, RunResult};
use serde::{Deserialize, Serialize};

mod batching;
mod ceiling;
mod cpu;
mod errors;
mod few_samples;
mod hiccups;
mod knee;
mod nested_checkout;
mod not_achieved;
mod outage;
mod pool_queueing;
mod recommend;
mod reconnects;
mod scaling;
mod stall;
mod starvation;
mod unequal_caps;

pub use outage::{outages, Outage};
pub use recommend::recommend;
pub use scaling::{usl_fits, UslFit};

/// One reason not to trust (part of) a run, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pitfall {
    /// Stable name, one of [`CHECKS`]' ids.
    pub id: String,
    /// What it means, in one line.
    pub title: String,
    /// The cells it concerns (`strategy c=N`).
    pub cells: Vec<String>,
    /// The numbers that show it, one line per cell or finding.
    pub evidence: Vec<String>,
}

/// The strategy and pool size to use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recommendation {
    pub strategy: String,
    pub pool_size: Option<usize>,
    pub concurrency: usize,
    pub reason: String,
}

/// One pitfall: its stable id, its meaning, and where a run shows it.
pub struct Check {
    pub id: &'static str,
    pub title: &'static str,
    find: fn(&Run) -> Vec<Evidence>,
}

/// One line of evidence, and the cell it is about (if one).
struct Evidence {
    cell: Option<String>,
    line: String,
}

impl Evidence {
    /// A line about cell `c`, starting with its label.
    fn cell(c: &CellResult, line: impl std::fmt::Display) -> Evidence {
        Evidence {
            cell: Some(label(c)),
            line: format!("{}: {line}", label(c)),
        }
    }

    /// A line about the run, or several cells.
    fn run(line: String) -> Evidence {
        Evidence { cell: None, line }
    }
}

/// What every check reads: the result, and what is derived from it once.
struct Run<'a> {
    result: &'a RunResult,
    /// Closed loop (c workers), not a rate.
    closed: bool,
    /// The shortest mean request time (connection in hand to whole
    /// answer) of any cell that succeeded: the target's service time plus
    /// the round trip, as near as this run can tell without the server's
    /// own counters.
    fastest_request_us: Option<f64>,
}

impl Run<'_> {
    fn cells(&self) -> impl Iterator<Item = &CellResult> {
        self.result.cells.iter()
    }
}

/// Every pitfall poolbench checks, by id.
pub const CHECKS: &[Check] = &[
    batching::CHECK,
    ceiling::CHECK,
    errors::CHECK,
    few_samples::CHECK,
    hiccups::CHECK,
    cpu::GENERATOR_SATURATED,
    cpu::MACHINE_BUSY,
    nested_checkout::CHECK,
    starvation::CHECK,
    not_achieved::CHECK,
    outage::CHECK,
    pool_queueing::CHECK,
    reconnects::CHECK,
    stall::CHECK,
    knee::CHECK,
    unequal_caps::CHECK,
];

/// Every pitfall that applies to `result`, ordered by id.
pub fn pitfalls(result: &RunResult) -> Vec<Pitfall> {
    let run = Run {
        result,
        closed: matches!(result.config.load, LoadModel::Closed),
        fastest_request_us: result
            .cells
            .iter()
            .filter(|c| c.ok > 0 && c.request_us.mean > 0.0)
            .map(|c| c.request_us.mean)
            .min_by(f64::total_cmp),
    };
    let mut found: Vec<Pitfall> = CHECKS
        .iter()
        .filter_map(|check| {
            let evidence = (check.find)(&run);
            (!evidence.is_empty()).then(|| Pitfall {
                id: check.id.to_string(),
                title: check.title.to_string(),
                cells: evidence.iter().filter_map(|e| e.cell.clone()).collect(),
                evidence: evidence.into_iter().map(|e| e.line).collect(),
            })
        })
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn label(c: &CellResult) -> String {
    format!("{} c={}", c.strategy, c.concurrency)
}

fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
        assert!(ids
            .iter()
            .all(|id| id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')));
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id listed twice");
    }
}
