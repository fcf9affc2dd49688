use crate::wait::{WaitHistogram, WaitStats};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Why a connection was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseCause {
    /// The connector said so, or a request on it failed.
    Broken,
    /// Idle longer than the idle timeout.
    Idle,
    /// Older than its (jittered) maximum lifetime.
    Lifetime,
    /// Above the number of connections the strategy keeps idle.
    Overflow,
    /// Closed by design: `per-request`, or the strategy was dropped.
    Released,
}

/// Counters kept in atomics, readable at any time.
#[derive(Default, Debug)]
pub(crate) struct Metrics {
    checkouts: AtomicU64,
    waited: AtomicU64,
    timeouts: AtomicU64,
    connect_errors: AtomicU64,
    opened: AtomicU64,
    closed: [AtomicU64; 5],
    open: AtomicU64,
    peak_open: AtomicU64,
    in_use: AtomicU64,
    peak_in_use: AtomicU64,
    nested_waits: AtomicU64,
    abandoned: AtomicU64,
    waits: WaitHistogram,
}

impl Metrics {
    pub(crate) fn checkout(&self, waited: bool) {
        self.checkouts.fetch_add(1, Relaxed);
        if waited {
            self.waited.fetch_add(1, Relaxed);
        }
        let now = self.in_use.fetch_add(1, Relaxed) + 1;
        self.peak_in_use.fetch_max(now, Relaxed);
    }
    /// A lease handed out, where in-use counts are kept elsewhere.
    pub(crate) fn count_checkout(&self, waited: bool) {
        self.checkouts.fetch_add(1, Relaxed);
        if waited {
            self.waited.fetch_add(1, Relaxed);
        }
    }
    pub(crate) fn checkin(&self) {
        self.in_use.fetch_sub(1, Relaxed);
    }
    pub(crate) fn waited_for(&self, wait: std::time::Duration) {
        self.waits.record(wait);
    }
    pub(crate) fn nested_wait(&self) {
        self.nested_waits.fetch_add(1, Relaxed);
    }
    /// A lease given back after its holder abandoned a request on it.
    pub(crate) fn abandoned(&self) {
        self.abandoned.fetch_add(1, Relaxed);
    }
    pub(crate) fn timeout(&self) {
        self.timeouts.fetch_add(1, Relaxed);
    }
    pub(crate) fn connect_error(&self) {
        self.connect_errors.fetch_add(1, Relaxed);
    }
    pub(crate) fn opened(&self) {
        self.opened.fetch_add(1, Relaxed);
        let now = self.open.fetch_add(1, Relaxed) + 1;
        self.peak_open.fetch_max(now, Relaxed);
    }
    pub(crate) fn closed(&self, cause: CloseCause) {
        self.closed[cause as usize].fetch_add(1, Relaxed);
        self.open.fetch_sub(1, Relaxed);
    }
    pub(crate) fn open(&self) -> u64 {
        self.open.load(Relaxed)
    }

    pub(crate) fn snapshot(&self) -> MetricsSnapshot {
        let closed = |c: CloseCause| self.closed[c as usize].load(Relaxed);
        MetricsSnapshot {
            checkouts: self.checkouts.load(Relaxed),
            waited: self.waited.load(Relaxed),
            timeouts: self.timeouts.load(Relaxed),
            connect_errors: self.connect_errors.load(Relaxed),
            opened: self.opened.load(Relaxed),
            closed_broken: closed(CloseCause::Broken),
            closed_idle: closed(CloseCause::Idle),
            closed_lifetime: closed(CloseCause::Lifetime),
            closed_overflow: closed(CloseCause::Overflow),
            closed_released: closed(CloseCause::Released),
            closed_abandoned: self.abandoned.load(Relaxed),
            open: self.open.load(Relaxed),
            peak_open: self.peak_open.load(Relaxed),
            in_use: self.in_use.load(Relaxed),
            peak_in_use: self.peak_in_use.load(Relaxed),
            nested_waits: self.nested_waits.load(Relaxed),
            waits: self.waits.snapshot(),
        }
    }
}

/// A copy of a strategy's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricsSnapshot {
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
}

impl MetricsSnapshot {
    /// Add another strategy's counters (peaks add up to an upper bound).
    pub fn merge(&mut self, o: &MetricsSnapshot) {
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
