//! A strategy's counters at one moment (opened, closed by cause, waits,
//! peaks), as results carry them.
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A copy of a strategy's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PoolCounters {
    /// Leases handed out.
    pub checkouts: u64,
    /// Leases that had to wait for a connection to come free.
    pub waited: u64,
    /// Checkouts that gave up at the checkout timeout.
    pub timeouts: u64,
    /// Connection attempts that failed.
    pub connect_errors: u64,
    /// Connections opened.
    pub opened: u64,
    /// Closed because broken.
    pub closed_broken: u64,
    /// Closed after idling past the idle timeout.
    pub closed_idle: u64,
    /// Closed at the end of their lifetime.
    pub closed_lifetime: u64,
    /// Closed because more were idle than the strategy keeps.
    pub closed_overflow: u64,
    /// Closed by design (per-request) or when the strategy was dropped.
    pub closed_released: u64,
    /// Of `closed_broken`, those the client closed itself: its request on
    /// them timed out, so the connection's state was unknown.
    #[serde(default)]
    pub closed_abandoned: u64,
    /// Open now.
    pub open: u64,
    /// Most open at once.
    pub peak_open: u64,
    /// Leased now.
    pub in_use: u64,
    /// Most leased at once.
    pub peak_in_use: u64,
    /// Checkouts that had to wait while their task already held a
    /// connection from the same strategy: the nested checkout that
    /// deadlocks a pool smaller than its callers' needs.
    pub nested_waits: u64,
    /// How long the checkouts that waited, waited.
    pub waits: WaitStats,
    /// The streams each connection's server allows at once (HTTP/2 and
    /// gRPC: its `SETTINGS_MAX_CONCURRENT_STREAMS`), one entry per
    /// connection (slot strategies: per slot, as last seen; others: per
    /// connection opened, the first 1,024), 0 where it set no limit; empty
    /// for protocols without such a setting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams_allowed: Vec<u64>,
    /// Idle connections the server had closed (end of stream or reset),
    /// found so at checkout or by the reaper, with how long they had been
    /// idle (see [`IdleClosed`]).
    #[serde(default, skip_serializing_if = "IdleClosed::is_empty")]
    pub idle_closed: IdleClosed,
}

/// Idle connections found closed by their server: how many, and the
/// shortest and longest time one of them had sat idle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdleClosed {
    pub count: u64,
    /// The shortest idle time among them, in µs.
    pub min_idle_us: u64,
    /// The longest idle time among them, in µs.
    pub max_idle_us: u64,
}

impl IdleClosed {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// One more, idle for `idle_us`.
    pub fn add(&mut self, idle_us: u64) {
        self.merge(&IdleClosed {
            count: 1,
            min_idle_us: idle_us,
            max_idle_us: idle_us,
        });
    }

    pub fn merge(&mut self, o: &IdleClosed) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        self.count += o.count;
        self.min_idle_us = self.min_idle_us.min(o.min_idle_us);
        self.max_idle_us = self.max_idle_us.max(o.max_idle_us);
    }
}

impl PoolCounters {
    /// Add another strategy's counters (peaks add up to an upper bound).
    pub fn merge(&mut self, o: &PoolCounters) {
        self.checkouts += o.checkouts;
        self.waited += o.waited;
        self.timeouts += o.timeouts;
        self.connect_errors += o.connect_errors;
        self.opened += o.opened;
        self.closed_broken += o.closed_broken;
        self.closed_idle += o.closed_idle;
        self.closed_lifetime += o.closed_lifetime;
        self.closed_overflow += o.closed_overflow;
        self.closed_released += o.closed_released;
        self.closed_abandoned += o.closed_abandoned;
        self.open += o.open;
        self.peak_open += o.peak_open;
        self.in_use += o.in_use;
        self.peak_in_use += o.peak_in_use;
        self.nested_waits += o.nested_waits;
        if self.waits.buckets.len() < o.waits.buckets.len() {
            self.waits.buckets.resize(o.waits.buckets.len(), 0);
        }
        for (a, b) in self.waits.buckets.iter_mut().zip(&o.waits.buckets) {
            *a += b;
        }
        self.waits.total_ns += o.waits.total_ns;
        self.waits.max_ns = self.waits.max_ns.max(o.waits.max_ns);
        self.streams_allowed.extend(&o.streams_allowed);
        self.idle_closed.merge(&o.idle_closed);
    }

    /// The smallest stream limit a server set on these connections
    /// (`None`: one request at a time, or no limit set).
    pub fn stream_limit(&self) -> Option<u64> {
        self.streams_allowed
            .iter()
            .copied()
            .filter(|&n| n > 0)
            .min()
    }

    /// All connections closed, whatever the cause.
    pub fn closed(&self) -> u64 {
        self.closed_broken
            + self.closed_idle
            + self.closed_lifetime
            + self.closed_overflow
            + self.closed_released
    }
}

/// Checkout waits so far. `buckets[i]` counts waits below 2^i ns (and at
/// least 2^(i-1) ns).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WaitStats {
    pub buckets: Vec<u64>,
    pub total_ns: u64,
    pub max_ns: u64,
}

impl WaitStats {
    /// Waits recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// An upper bound of the `q` quantile (0..=1) of waits.
    pub fn quantile(&self, q: f64) -> Duration {
        let count = self.count();
        if count == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let upper = if i >= 63 {
                    u64::MAX
                } else {
                    (1u64 << i).saturating_sub(1)
                };
                return Duration::from_nanos(upper.min(self.max_ns));
            }
        }
        Duration::from_nanos(self.max_ns)
    }
}
