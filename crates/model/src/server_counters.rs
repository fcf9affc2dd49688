use serde::{Deserialize, Serialize};

/// The target server's own counters for one cell: ground truth for what the
/// load generator achieved.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ServerCounters {
    pub connections_accepted: u64,
    pub connections_open: u64,
    pub connections_peak: u64,
    pub requests: u64,
    pub inflight_peak: u64,
    /// Total time requests spent inside the server, where it says.
    pub service_ns_total: u64,
    /// Service mode: the server's database pool, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_pool: Option<DbPoolCounters>,
}

/// A service's own database pool, as its stats endpoint reports it (the
/// built-in server's service mode writes these, and a result keeps them).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(default)]
pub struct DbPoolCounters {
    /// Connections the pool keeps.
    pub size: u64,
    /// Overflow connections allowed above `size`.
    pub overflow: u64,
    /// Connections each request holds at once (2 with a nested checkout).
    pub per_request: u64,
    /// Leases handed out.
    pub checkouts: u64,
    /// Checkouts that waited for a connection.
    pub waits: u64,
    /// Checkouts that gave up at the checkout timeout.
    pub timeouts: u64,
    /// Checkouts that waited while their request already held a connection.
    pub nested_waits: u64,
    /// Most connections leased at once.
    pub peak_in_use: u64,
    /// Most requests handled at once.
    pub peak_requests: u64,
    /// Connections open now.
    pub open: u64,
    /// Requests answered from the service's cache.
    pub cache_hits: u64,
    /// Requests the cache could not answer.
    pub cache_misses: u64,
}

impl DbPoolCounters {
    fn combine(self, later: DbPoolCounters) -> DbPoolCounters {
        DbPoolCounters {
            checkouts: self.checkouts + later.checkouts,
            cache_hits: self.cache_hits + later.cache_hits,
            cache_misses: self.cache_misses + later.cache_misses,
            waits: self.waits + later.waits,
            timeouts: self.timeouts + later.timeouts,
            nested_waits: self.nested_waits + later.nested_waits,
            peak_in_use: self.peak_in_use.max(later.peak_in_use),
            peak_requests: self.peak_requests.max(later.peak_requests),
            ..later
        }
    }

    /// Fewest connections with which `tasks` concurrent requests, each
    /// holding `per_request` at once, can never all wait: T×(C−1)+1.
    pub fn deadlock_free_minimum(&self, tasks: u64) -> u64 {
        tasks * self.per_request.saturating_sub(1) + 1
    }
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
            db_pool: match (self.db_pool, later.db_pool) {
                (Some(a), Some(b)) => Some(a.combine(b)),
                (a, b) => b.or(a),
            },
        }
    }

    /// Mean time a request spent inside the server, in µs.
    pub fn mean_service_us(&self) -> Option<f64> {
        (self.requests > 0 && self.service_ns_total > 0)
            .then(|| self.service_ns_total as f64 / self.requests as f64 / 1000.0)
    }
}
