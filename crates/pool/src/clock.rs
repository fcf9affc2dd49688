//! A coarse clock for the checkout hot path: reading the system clock costs
//! tens of nanoseconds on some machines, twice per checkout. The reaper
//! tick refreshes this one; without a reaper it reads the real clock.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

pub(crate) struct CoarseClock {
    base: Instant,
    /// Nanoseconds since `base` at the last tick.
    ticked: AtomicU64,
    ticking: AtomicBool,
}

impl CoarseClock {
    pub(crate) fn new() -> Self {
        CoarseClock {
            base: Instant::now(),
            ticked: AtomicU64::new(0),
            ticking: AtomicBool::new(false),
        }
    }

    /// Now, give or take one tick.
    pub(crate) fn now(&self) -> Instant {
        if self.ticking.load(Relaxed) {
            self.base + Duration::from_nanos(self.ticked.load(Relaxed))
        } else {
            Instant::now()
        }
    }

    /// Advance to the real time; from the first tick on, `now` is coarse.
    pub(crate) fn tick(&self) {
        let ns = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.ticked.fetch_max(ns, Relaxed);
        self.ticking.store(true, Relaxed);
    }
}
