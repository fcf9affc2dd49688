use crate::wait::WaitHistogram;
use poolbench_pool_types::{IdleClosed, PoolCounters};
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
    /// Streams each connection's server allows at once, where its protocol
    /// has such a setting (0: no limit set); at most [`MOST_ADVERTISED`]
    /// connections kept.
    advertised: std::sync::Mutex<Vec<u64>>,
    /// Idle connections found closed by their server.
    idle_closed: std::sync::Mutex<IdleClosed>,
}

/// Connections whose advertised streams are kept.
const MOST_ADVERTISED: usize = 1024;

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
    /// A checkout that waited outside the pool, in its caller's line.
    pub(crate) fn waited_in_line(&self, wait: std::time::Duration) {
        self.waited.fetch_add(1, Relaxed);
        self.waits.record(wait);
    }
    pub(crate) fn nested_wait(&self) {
        self.nested_waits.fetch_add(1, Relaxed);
    }
    /// A lease given back after its holder abandoned a request on it.
    pub(crate) fn abandoned(&self) {
        self.abandoned.fetch_add(1, Relaxed);
    }
    /// A connection opened whose server allows `streams` at once.
    pub(crate) fn advertised(&self, streams: Option<usize>) {
        let Some(streams) = streams else { return };
        let mut a = self.advertised.lock().unwrap_or_else(|e| e.into_inner());
        if a.len() < MOST_ADVERTISED {
            a.push(match streams >= crate::UNLIMITED_STREAMS {
                true => 0,
                false => streams as u64,
            });
        }
    }
    /// An idle connection found closed by its server after `idle`.
    pub(crate) fn closed_while_idle(&self, idle: std::time::Duration) {
        let mut c = self.idle_closed.lock().unwrap_or_else(|e| e.into_inner());
        c.add(idle.as_micros() as u64);
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

    pub(crate) fn snapshot(&self) -> PoolCounters {
        let closed = |c: CloseCause| self.closed[c as usize].load(Relaxed);
        PoolCounters {
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
            streams_allowed: self
                .advertised
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            idle_closed: *self.idle_closed.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}
