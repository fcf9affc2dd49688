//! Reuses of connections that sat idle in the pool, over a cell (warm-up
//! included): the longest idle after which a request worked, and the
//! requests that met a connection the server had closed meanwhile.
use poolbench_model::IdleReuse;
use poolbench_targets::{ErrorKind, RequestError};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
pub(crate) struct IdleWatch {
    alive_max_us: AtomicU64,
    stale: Mutex<IdleReuse>,
}

impl IdleWatch {
    /// A request succeeded on a connection idle for `idle` before (`None`:
    /// a new one).
    pub(crate) fn alive(&self, idle: Option<Duration>) {
        let Some(idle) = idle else { return };
        let us = idle.as_micros() as u64;
        // A read first: most reuses set no new longest.
        if us > self.alive_max_us.load(Relaxed) {
            self.alive_max_us.fetch_max(us, Relaxed);
        }
    }

    /// A request failed on a connection idle for `idle` before: counted
    /// when the failure says the server had closed it (`resent`: it goes
    /// out again on another connection).
    pub(crate) fn failed(&self, idle: Option<Duration>, e: &RequestError, resent: bool) {
        let Some(idle) = idle.filter(|_| closed_by_server(e)) else {
            return;
        };
        let mut s = self.stale.lock().unwrap_or_else(|e| e.into_inner());
        s.stale.add(idle.as_micros() as u64);
        if !resent {
            s.failed += 1;
        }
    }

    pub(crate) fn take(&self) -> IdleReuse {
        let mut r = *self.stale.lock().unwrap_or_else(|e| e.into_inner());
        r.alive_idle_max_us = self.alive_max_us.load(Relaxed);
        r
    }
}

/// End of stream or reset before an answer, or PostgreSQL's own notice of
/// a session it ended (SQLSTATE class 57: `idle_session_timeout` sends
/// 57P05 before closing).
fn closed_by_server(e: &RequestError) -> bool {
    e.broken
        && (e.unsent
            || e.kind == ErrorKind::Reset
            || e.sqlstate.is_some_and(|s| s.as_str().starts_with("57")))
}
