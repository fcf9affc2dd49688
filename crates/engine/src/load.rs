//! Load models: closed loop, open loop at a rate, batch samples.
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

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

impl LoadModel {
    /// The model's name in results.
    pub fn name(&self) -> &'static str {
        match self {
            LoadModel::Closed => "closed",
            LoadModel::Open { .. } => "open",
            LoadModel::Batch { .. } => "batch",
        }
    }
}

/// Intended send times of an open loop.
pub(crate) struct Schedule {
    next: Instant,
    gap_s: f64,
    poisson: Option<StdRng>,
    /// A rate that ramps, from the start of the measured window.
    ramp: Option<(crate::ramp::Ramp, Instant)>,
}

impl Schedule {
    pub(crate) fn new(start: Instant, rate: f64, arrival: Arrival) -> Self {
        Schedule {
            next: start,
            gap_s: 1.0 / rate,
            poisson: (arrival == Arrival::Poisson).then(|| StdRng::seed_from_u64(0x5eed)),
            ramp: None,
        }
    }

    /// The rate follows `ramp` from `measure_from` on (its start before):
    /// each gap is that of the rate at the time it begins.
    pub(crate) fn ramping(mut self, ramp: crate::ramp::Ramp, measure_from: Instant) -> Self {
        self.ramp = Some((ramp, measure_from));
        self
    }

    /// The next intended send time.
    pub(crate) fn next(&mut self) -> Instant {
        let at = self.next;
        let mean = match &self.ramp {
            Some((ramp, from)) => 1.0 / ramp.at(at.saturating_duration_since(*from).as_secs_f64()),
            None => self.gap_s,
        };
        let gap = match &mut self.poisson {
            Some(rng) => -(1.0 - rng.random::<f64>()).ln() * mean,
            None => mean,
        };
        self.next += Duration::from_secs_f64(gap);
        at
    }
}
