//! Load models: closed loop, open loop at a rate, batch samples.
use serde::{Deserialize, Serialize};

/// How requests are issued.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LoadModel {
    /// c workers, each: acquire, request, release, again.
    Closed,
    /// Requests at a fixed rate whatever the answers; latency counts from
    /// the intended send time. At most `concurrency` in flight.
    Open {
        /// Requests per second.
        rate: f64,
        arrival: Arrival,
    },
    /// `size` requests at concurrency c timed as one sample, repeated: at
    /// least `samples` samples, and for at least the duration.
    Batch { size: u64, samples: u64 },
}

/// Gaps between open-loop arrivals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps (a Poisson process).
    Poisson,
}

/// Requests per second one open-loop load thread sends on time: one
/// thread held 100,000 req/s of HTTP/1.1 to nginx beside it on 2 cores,
/// where two threads (sharing the connections, so waking each other)
/// lagged by milliseconds from 50,000 (bench/log/RESULTS.md).
pub const OPEN_RATE_PER_THREAD: f64 = 100_000.0;

impl LoadModel {
    /// Load threads an open loop at `rate` req/s needs when not told: one
    /// per `OPEN_RATE_PER_THREAD`, at least one, at most `cores`.
    pub fn open_threads(rate: f64, cores: usize) -> usize {
        let needed = (rate / OPEN_RATE_PER_THREAD).ceil();
        (needed.max(1.0) as usize).clamp(1, cores.max(1))
    }

    /// The model's name in results.
    pub fn name(&self) -> &'static str {
        match self {
            LoadModel::Closed => "closed",
            LoadModel::Open { .. } => "open",
            LoadModel::Batch { .. } => "batch",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_loop_takes_a_thread_per_hundred_thousand_within_the_cores() {
        assert_eq!(LoadModel::open_threads(50.0, 8), 1);
        assert_eq!(LoadModel::open_threads(100_000.0, 8), 1);
        assert_eq!(LoadModel::open_threads(100_001.0, 8), 2);
        assert_eq!(LoadModel::open_threads(450_000.0, 8), 5);
        assert_eq!(LoadModel::open_threads(5_000_000.0, 8), 8);
        assert_eq!(LoadModel::open_threads(300_000.0, 0), 1);
    }
}
