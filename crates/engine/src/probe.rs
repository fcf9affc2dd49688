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
    /// Total time requests spent inside the server, where it says.
    pub service_ns_total: u64,
}

impl ServerCounters {
    /// Counters over two consecutive runs.
    pub fn combine(self, later: ServerCounters) -> ServerCounters {
        ServerCounters {
            connections_accepted: self.connections_accepted + later.connections_accepted,
            connections_open: later.connections_open,
            connections_peak: self.connections_peak.max(later.connections_peak),
            requests: self.requests + later.requests,
            inflight_peak: self.inflight_peak.max(later.inflight_peak),
            service_ns_total: self.service_ns_total + later.service_ns_total,
        }
    }

    /// Mean time a request spent inside the server, in µs.
    pub fn mean_service_us(&self) -> Option<f64> {
        (self.requests > 0 && self.service_ns_total > 0)
            .then(|| self.service_ns_total as f64 / self.requests as f64 / 1000.0)
    }
}

/// Reads the target server's counters, when the run can (the built-in
/// server does).
pub trait ServerProbe: Send + Sync {
    /// Zero the counters before a cell.
    fn reset(&self);
    /// The counters now.
    fn read(&self) -> ServerCounters;
}
