//! What a finding check is, and what every check reads.
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, RunResult};

/// One finding: its stable id, its meaning, and where a run shows it.
pub struct Check {
    pub id: Id,
    pub title: &'static str,
    pub(crate) find: fn(&Run) -> Vec<Evidence>,
}

/// One line of evidence, and the cell it is about (if one).
pub(crate) struct Evidence {
    pub(crate) cell: Option<String>,
    pub(crate) line: String,
}

impl Evidence {
    /// A line about cell `c`, starting with its label.
    pub(crate) fn cell(c: &CellResult, line: impl std::fmt::Display) -> Evidence {
        Evidence {
            cell: Some(c.label()),
            line: format!("{}: {line}", c.label()),
        }
    }

    /// A line about the run, or several cells.
    pub(crate) fn run(line: String) -> Evidence {
        Evidence { cell: None, line }
    }
}

/// What every check reads: the result, and what is derived from it once.
pub(crate) struct Run<'a> {
    pub(crate) result: &'a RunResult,
    /// Closed loop (c workers), not a rate.
    pub(crate) closed: bool,
    /// The shortest mean request time (connection in hand to whole
    /// answer) of any cell that succeeded: the target's service time plus
    /// the round trip, as near as this run can tell without the server's
    /// own counters.
    pub(crate) fastest_request_us: Option<f64>,
}

impl Run<'_> {
    pub(crate) fn cells(&self) -> impl Iterator<Item = &CellResult> {
        self.result.cells.iter()
    }
}

pub(crate) use poolbench_model::format::ms;
