//! A histogram of checkout waits in atomics: power-of-two nanosecond
//! buckets, readable at any time. Only checkouts that waited are recorded.
use poolbench_pool_types::WaitStats;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

const BUCKETS: usize = 40; // up to 2^39 ns, about 9 minutes; longer waits land in the last

#[derive(Debug)]
pub(crate) struct WaitHistogram {
    buckets: [AtomicU64; BUCKETS],
    total_ns: AtomicU64,
    max_ns: AtomicU64,
}

impl Default for WaitHistogram {
    fn default() -> Self {
        WaitHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            total_ns: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
        }
    }
}

impl WaitHistogram {
    pub(crate) fn record(&self, wait: Duration) {
        let ns = wait.as_nanos().min(u64::MAX as u128) as u64;
        let bucket = ((64 - ns.leading_zeros()) as usize).min(BUCKETS - 1);
        self.buckets[bucket].fetch_add(1, Relaxed);
        self.total_ns.fetch_add(ns, Relaxed);
        self.max_ns.fetch_max(ns, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> WaitStats {
        WaitStats {
            buckets: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            total_ns: self.total_ns.load(Relaxed),
            max_ns: self.max_ns.load(Relaxed),
        }
    }
}
