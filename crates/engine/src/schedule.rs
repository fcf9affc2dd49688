//! The open loop's intended send times: evenly spaced or Poisson, at a
//! fixed rate or one that follows a ramp.
use poolbench_model::{Arrival, Ramp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Intended send times of an open loop.
pub(crate) struct Schedule {
    next: Instant,
    gap_s: f64,
    poisson: Option<StdRng>,
    /// A rate that ramps, from the start of the measured window.
    ramp: Option<(Ramp, Instant)>,
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
    pub(crate) fn ramping(mut self, ramp: Ramp, measure_from: Instant) -> Self {
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
