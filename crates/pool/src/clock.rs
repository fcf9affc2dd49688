//! A coarse clock for the checkout hot path: reading the system clock costs
//! tens of nanoseconds on some machines, twice per checkout. The reaper
//! tick refreshes this one; without a reaper it reads the real clock.
//!
//! It gives bounds, never a guess: `lower()` is at most now, `upper()` at
//! least now (while the reaper ticks within its slack). Idle times are
//! stamped with `upper()` and measured from `lower()`, so a connection is
//! never closed for idling before its time; expiry is checked against
//! `upper()`, so an expired connection is never handed out.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

pub(crate) struct CoarseClock {
    base: Instant,
    /// Nanoseconds since `base` at the last tick.
    ticked: AtomicU64,
    ticking: AtomicBool,
    /// Nanoseconds `upper()` adds: two tick periods plus slack for a late
    /// tick.
    ahead: AtomicU64,
}

/// Slack for a reaper tick that runs late on a busy runtime.
const SLACK: Duration = Duration::from_millis(20);

impl CoarseClock {
    pub(crate) fn new() -> Self {
        CoarseClock {
            base: Instant::now(),
            ticked: AtomicU64::new(0),
            ticking: AtomicBool::new(false),
            ahead: AtomicU64::new(0),
        }
    }

    /// At most now.
    pub(crate) fn lower(&self) -> Instant {
        if self.ticking.load(Relaxed) {
            self.base + Duration::from_nanos(self.ticked.load(Relaxed))
        } else {
            Instant::now()
        }
    }

    /// At least now.
    pub(crate) fn upper(&self) -> Instant {
        if self.ticking.load(Relaxed) {
            self.base + Duration::from_nanos(self.ticked.load(Relaxed) + self.ahead.load(Relaxed))
        } else {
            Instant::now()
        }
    }

    /// The reaper ticks every `period` from now on.
    pub(crate) fn set_period(&self, period: Duration) {
        let ahead = period * 2 + SLACK;
        self.ahead
            .store(u64::try_from(ahead.as_nanos()).unwrap_or(u64::MAX), Relaxed);
    }

    /// Advance to the real time; from the first tick on, the clock is coarse.
    pub(crate) fn tick(&self) {
        let ns = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.ticked.fetch_max(ns, Relaxed);
        self.ticking.store(true, Relaxed);
    }
}
