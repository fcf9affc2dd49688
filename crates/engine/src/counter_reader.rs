//! The server's own counters, read around each cell where the target is
//! one whose counters poolbench can read.
use poolbench_model::ServerCounters;

/// Reads the target server's counters, when the run can (the built-in
/// server does).
pub trait CounterReader: Send + Sync {
    /// Zero the counters before a cell.
    fn reset(&self);
    /// The counters now.
    fn read(&self) -> ServerCounters;
}
