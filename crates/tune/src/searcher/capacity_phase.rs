//! Phase 1: raise, then bisect, the requests in flight, one connection per
//! request (so no client pool is in the way); every failure waited out.
use super::state::{generator_limit, Clock, Measure, Searcher};
use crate::capacity::capacity;
use crate::search::{next_level, CapacityLimits};
use poolbench_model::{StrategySpec, TuneLoad, TunePhase};

/// Share of the budget by the end of phase 1.
const CAPACITY_SHARE: f64 = 0.45;
/// Runs a capacity point may take (one when its interval is within 5%).
const RUNS: (usize, usize) = (1, 2);

impl<M: Measure, C: Clock> Searcher<M, C> {
    pub(crate) fn capacity_phase(&mut self) -> Result<(), M::Error> {
        loop {
            let want = self.want();
            let limits = CapacityLimits {
                want: want.min(self.most),
                most: self.most,
            };
            let slo = self.setup.slo.clone();
            let Some(level) = next_level(&self.result.points, slo.as_ref(), limits) else {
                return Ok(());
            };
            // Keep time for a few pool points and every confirmation.
            let after = self.run_cost() * (4 + 9 * self.setup.families.len() as u32);
            if self.stopped() {
                return Ok(());
            }
            if self.left(CAPACITY_SHARE) < self.run_cost() || self.left(1.0) < after {
                self.note_early(format!(
                    "the capacity search ran out of its share of the budget at {level} in flight"
                ));
                return Ok(());
            }
            let point = self.measure(
                TunePhase::Capacity,
                StrategySpec::Pool(Some(level)),
                level,
                RUNS,
            )?;
            if self.choose_threads(&point, level >= limits.want)? {
                // One thread held the load back: the level (and the levels
                // above an earlier comparison) again, with more.
                let slo = self.setup.slo.clone();
                self.result.capacity = capacity(&self.result.points, slo.as_ref(), false);
                continue;
            }
            if let Some(why) = generator_limit(&point) {
                self.most = level.max(1);
                self.note_early(format!(
                    "at {level} in flight {why}: the capacity search stopped there"
                ));
            }
            self.recover_if_failed(&point)?;
        }
    }

    /// How far phase 1 must raise: the client's workers, or with a rate
    /// twice the requests in flight it needs (rate × service time).
    fn want(&self) -> usize {
        match self.setup.load {
            TuneLoad::Concurrency(c) => c,
            TuneLoad::Rate(r) => match self.service_s() {
                Some(s) => ((2.0 * r * s).ceil() as usize).max(8),
                None => 64,
            },
        }
    }
}
