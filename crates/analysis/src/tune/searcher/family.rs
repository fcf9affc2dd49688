//! Phase 2 and the confirmation of `tune`, for one strategy family: the
//! pool size bisected at the client's load, then the pick and its
//! neighbours repeated.
use super::state::{Clock, Measure, Searcher};
use crate::tune::capacity::stall_threshold;
use crate::tune::confirm::confirm_sizes;
use crate::tune::family_of;
use crate::tune::pool_search::{next_pool, PoolBounds, PoolStep};
use poolbench_model::{FamilyAnswer, StrategySpec, TuneLoad, TunePhase, TunePoint};

/// Runs of each confirmation point.
const CONFIRM_RUNS: usize = 3;
/// Sizes each confirmation measures (the pick and its neighbours).
const CONFIRM_SIZES: u32 = 3;

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// Search one family's pool size and confirm it.
    pub(crate) fn family_phase(&mut self, family: &str) -> Result<(), M::Error> {
        let in_flight = self.client_in_flight();
        let spec = family_spec(family);
        if !spec.needs_size() {
            // One way to connect, nothing to size: measure it, repeated.
            if !self.stopped() {
                let p = self.measure(
                    TunePhase::Confirm,
                    spec,
                    in_flight,
                    (CONFIRM_RUNS, CONFIRM_RUNS),
                )?;
                self.recover_if_failed(&p)?;
            }
            return Ok(());
        }
        let upper = self.upper(in_flight);
        let bounds = PoolBounds {
            upper,
            guess: self
                .result
                .capacity
                .knee_in_flight
                .unwrap_or(upper)
                .min(upper),
            stall_s: stall_threshold(self.result.capacity.service_time_us),
        };
        let chosen = loop {
            let mine: Vec<&TunePoint> = self
                .result
                .points
                .iter()
                .filter(|p| p.phase == TunePhase::Pool && family_of(&p.strategy) == family)
                .collect();
            match next_pool(&mine, self.result.slo.as_ref(), bounds) {
                PoolStep::Done(n) => break n,
                PoolStep::Nothing(why) => return self.no_answer(family, why),
                PoolStep::Measure(n) => {
                    if self.stopped() || self.left(1.0) < self.run_cost() + self.reserve() {
                        let why = match (self.gave_up, &self.result.stopped_early) {
                            (true, Some(why)) => why.clone(),
                            _ => "the budget ran out during the pool search; raise --budget".into(),
                        };
                        return self.no_answer(family, why);
                    }
                    let p = self.measure(TunePhase::Pool, spec.with_size(n), in_flight, (1, 2))?;
                    self.recover_if_failed(&p)?;
                }
            }
        };
        for n in confirm_sizes(chosen, upper) {
            if self.stopped() {
                break;
            }
            let p = self.measure(
                TunePhase::Confirm,
                spec.with_size(n),
                in_flight,
                (CONFIRM_RUNS, CONFIRM_RUNS),
            )?;
            self.recover_if_failed(&p)?;
        }
        Ok(())
    }

    /// Time kept for the confirmations of this family and the ones after.
    fn reserve(&self) -> std::time::Duration {
        self.run_cost() * (CONFIRM_SIZES * CONFIRM_RUNS as u32 * self.families_left as u32)
    }

    /// Requests in flight at the client's load: its workers, or with a
    /// rate the open loop's cap.
    fn client_in_flight(&self) -> usize {
        match self.setup.load {
            TuneLoad::Concurrency(c) => c,
            TuneLoad::Rate(r) => {
                let s = self.service_s().unwrap_or(0.001);
                ((8.0 * r * s).ceil() as usize).clamp(64, self.most.max(64))
            }
        }
    }

    /// The largest pool worth trying: the client's load, below the cliff,
    /// within the search's most.
    fn upper(&self, in_flight: usize) -> usize {
        let cap = &self.result.capacity;
        let below_cliff = cap
            .cliff_in_flight
            .map_or(usize::MAX, |c| c.saturating_sub(1));
        in_flight.min(below_cliff).min(self.setup.most_in_flight)
    }

    fn no_answer(&mut self, family: &str, why: String) -> Result<(), M::Error> {
        self.result.families_found.push(FamilyAnswer {
            family: family.to_string(),
            pool_size: None,
            throughput_rps: None,
            p99_us: None,
            reason: Some(why),
        });
        Ok(())
    }
}

/// A family's strategy (its size filled in later).
fn family_spec(family: &str) -> StrategySpec {
    match family {
        "round-robin" => StrategySpec::RoundRobin(None),
        "least-loaded" => StrategySpec::LeastLoaded(None),
        "take-or-create" => StrategySpec::TakeOrCreate(None),
        "shared" => StrategySpec::Shared,
        "per-request" => StrategySpec::PerRequest,
        _ => StrategySpec::Pool(None),
    }
}
