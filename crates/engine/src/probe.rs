use serde::{Deserialize, Serialize};

/// The target server's own counters for one cell: ground truth for what the
/// load generator achieved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCounters {
    pub connections_accepted: u64,
    pub connections_open: u64,
    pub connections_peak: u64,
    pub requests: u64,
    pub inflight_peak: u64,
}

/// Reads the target server's counters, when the run can (the built-in
/// server does).
pub trait ServerProbe: Send + Sync {
    /// Zero the counters before a cell.
    fn reset(&self);
    /// The counters now.
    fn read(&self) -> ServerCounters;
}
