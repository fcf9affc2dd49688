//! A histogram of checkout waits in atomics: power-of-two nanosecond
//! buckets, readable at any time. Only checkouts that waited are recorded.
use serde::{Deserialize, Serialize};
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

/// Checkout waits so far. `buckets[i]` counts waits below 2^i ns (and at
/// least 2^(i-1) ns).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
