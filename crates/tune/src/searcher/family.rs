//! Phase 2 and the confirmation of `tune`, for one strategy family: pool
//! sizes compared with the reference at the client's load, paired and
//! interleaved (pool_search.rs decides which), then the pick confirmed by
//! more rounds; a pick the confirmation rejects sends the search on.
use super::state::{Clock, Measure, Searcher};
use crate::capacity::capacity_points;
use crate::point::failure;
use crate::point::point_of;
use crate::pool_search::{
    confirmed_pick, disturbed, next_pool, verdicts, PoolBounds, PoolStep, CONFIRM_ROUNDS,
    MOST_ROUNDS,
};
use crate::verdict::meets;
use crate::{failed_sizes, family_of};
use poolbench_model::{Family, StrategySpec, TuneComparison, TuneLoad, TunePhase, TunePoint};

/// Picks a family's confirmation may reject before the reference is taken.
const MOST_REJECTED: usize = 2;
/// Times a reference that broke the bounds may be replaced by a lower one.
const MOST_LOWERED: usize = 2;

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// Search one family's pool size and confirm it.
    pub(crate) fn family_phase(&mut self, family: &str) -> Result<(), M::Error> {
        let in_flight = self.client_in_flight();
        let skipped = self.setup.skipped.iter().find(|(f, _)| f == family);
        if let Some((_, why)) = skipped {
            let why = why.clone();
            return self.no_answer(family, why);
        }
        let spec = family_spec(family);
        if !spec.needs_size() {
            // One way to connect, nothing to size: measure it, repeated.
            if !self.stopped() {
                let p = self.measure(
                    TunePhase::Confirm,
                    spec,
                    in_flight,
                    (CONFIRM_ROUNDS, CONFIRM_ROUNDS),
                )?;
                self.recover_if_failed(&p)?;
            }
            return Ok(());
        }
        let mut upper = self.settle_reference(family, spec, in_flight)?;
        if upper == 0 {
            return self.no_answer(family, "no pool size below the cliff".into());
        }
        let (mut rejected, mut lowered) = (0, 0);
        loop {
            let bounds = PoolBounds {
                upper,
                guesses: self.guesses(family, in_flight, upper),
                least: self.least(family, in_flight, upper),
            };
            let (judged, _) = self.judged(family, upper);
            let (size, phase) = match next_pool(&judged, &bounds) {
                PoolStep::Done(n) => (n, TunePhase::Confirm),
                // Out of time for searching: confirm the best known so far.
                PoolStep::Compare(_) if self.left(1.0) < self.compare_cost(2) + self.reserve() => {
                    let best = judged.iter().filter(|v| v.good).map(|v| v.pool_size).min();
                    (best.unwrap_or(upper), TunePhase::Confirm)
                }
                PoolStep::Compare(n) => (n, TunePhase::Pool),
            };
            let confirming = phase == TunePhase::Confirm;
            let size = if confirming && rejected >= MOST_REJECTED {
                upper
            } else {
                size
            };
            if confirming && self.stopped() {
                return self.out_of_time(family);
            }
            if let Some(why) = self.compare_checked(family, spec, size, upper, phase)? {
                // The reference broke the bounds (the cliff lies below
                // where it was narrowed to): a lower one.
                match self
                    .lower_reference(upper)
                    .filter(|_| lowered < MOST_LOWERED)
                {
                    Some(u) => (upper, lowered) = (u, lowered + 1),
                    None => return self.no_answer(family, why),
                }
                continue;
            }
            if !confirming {
                continue;
            }
            let (_, failed) = self.judged(family, upper);
            let mine = self.comparisons_of(family, upper);
            if confirmed_pick(&mine, &failed).is_some() || size == upper {
                return Ok(());
            }
            rejected += 1;
        }
    }

    /// [`Self::compare`], and once more where its rounds read so far under
    /// a smaller size's that the machine must have moved them
    /// ([`disturbed`]; not on a service that slows with more in flight):
    /// the first rounds are kept in the result, set aside.
    fn compare_checked(
        &mut self,
        family: &str,
        spec: StrategySpec,
        n: usize,
        reference: usize,
        phase: TunePhase,
    ) -> Result<Option<String>, M::Error> {
        let broke = self.compare(family, spec, n, reference, phase)?;
        if broke.is_some() || n >= reference || self.result.capacity.retrograde_from.is_some() {
            return Ok(broke);
        }
        let Some((new, earlier)) = self.result.comparisons.split_last() else {
            return Ok(None);
        };
        let earlier: Vec<&TuneComparison> = earlier.iter().collect();
        let again = earlier
            .iter()
            .any(|c| c.family == family && c.pool_size == n && c.set_aside.is_some());
        let in_flight = self.client_in_flight();
        let reads: Vec<f64> = self
            .result
            .points
            .iter()
            .filter(|p| p.pool_size == reference && p.in_flight == in_flight)
            .filter(|p| p.rate.is_none() && p.phase != TunePhase::Recovery)
            .filter(|p| family_of(&p.strategy) == family)
            .map(|p| p.throughput_rps)
            .collect();
        let why = match disturbed(&earlier, new, &reads) {
            Some(why) if !again => why,
            _ => return Ok(None),
        };
        if self.stopped() || self.left(1.0) < self.compare_cost(2) + self.reserve() {
            return Ok(None);
        }
        if let Some(last) = self.result.comparisons.last_mut() {
            last.set_aside = Some(why);
        }
        self.compare(family, spec, n, reference, phase)
    }

    /// Compare `n` connections with the `reference`, round by round (`n`,
    /// reference, `n`, reference …); both points and the rounds' ratios
    /// kept. `Some(why)`: the reference itself broke the bounds.
    pub(super) fn compare(
        &mut self,
        family: &str,
        spec: StrategySpec,
        n: usize,
        reference: usize,
        phase: TunePhase,
    ) -> Result<Option<String>, M::Error> {
        let (first, most) = match phase {
            TunePhase::Confirm => (CONFIRM_ROUNDS, CONFIRM_ROUNDS),
            _ => (2, MOST_ROUNDS),
        };
        let in_flight = self.client_in_flight();
        let ask = |size: usize| self.ask(phase, sized(spec, size, in_flight), in_flight);
        let (mine, theirs) = (ask(n), ask(reference));
        let rate = self.rate();
        let (mut a, mut r, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            // A B, then B A: a drift of the machine that is steady over a
            // few runs cancels in the rounds' mean.
            let reversed = ratios.len() % 2 == 1 && n != reference;
            let cr = match reversed {
                true => Some(self.run_once(&theirs)?),
                false => None,
            };
            let ca = self.run_once(&mine)?;
            let cr = match (cr, n == reference) {
                (Some(c), _) => Some(c),
                (None, true) => None,
                (None, false) => Some(self.run_once(&theirs)?),
            };
            let x = point_of(phase, rate, std::slice::from_ref(&ca)).throughput_rps;
            let y = cr.as_ref().map_or(x, |c| {
                point_of(phase, rate, std::slice::from_ref(c)).throughput_rps
            });
            a.push(ca);
            r.extend(cr);
            ratios.push(if y > 0.0 { x / y } else { 0.0 });
            let failed = point_of(phase, rate, &a).requests == 0;
            let more = ratios.len() < first || crate::pool_search::needs_round(&ratios, most);
            if !more || failed || self.measure.interrupted() || self.left(1.0) < self.run_cost() * 2
            {
                break;
            }
        }
        let pa = self.keep(point_of(phase, rate, &a));
        let pr = (!r.is_empty()).then(|| self.keep(point_of(phase, rate, &r)));
        self.result.comparisons.push(TuneComparison {
            phase,
            family: family.to_string(),
            pool_size: n,
            reference,
            ratios,
            set_aside: None,
        });
        self.recover_if_failed(&pa)?;
        let slo = self.setup.slo.clone();
        let reference_point = pr.as_ref().unwrap_or(&pa);
        let broke = meets(reference_point, slo.as_ref(), self.stall_s()).err();
        if let Some(p) = &pr {
            self.recover_if_failed(p)?;
        }
        Ok(broke.map(|why| {
            format!(
                "no pool size meets the bounds: {} {why}",
                reference_point.strategy
            )
        }))
    }

    /// A point measured: kept in the result, shown in the progress.
    fn keep(&mut self, p: TunePoint) -> TunePoint {
        self.measure.measured(&p, self.clock.now());
        self.result.points.push(p.clone());
        p
    }

    /// This family's comparisons with `reference` so far.
    fn comparisons_of(&self, family: &str, reference: usize) -> Vec<&TuneComparison> {
        self.result
            .comparisons
            .iter()
            .filter(|c| c.family == family && c.reference == reference)
            .collect()
    }

    /// The most requests in flight below `upper` the capacity search
    /// measured without a failure.
    fn lower_reference(&self, upper: usize) -> Option<usize> {
        let slo = self.setup.slo.clone();
        capacity_points(&self.result.points)
            .into_iter()
            .filter(|p| p.in_flight < upper)
            .filter(|p| failure(p, slo.as_ref(), self.stall_s()).is_none())
            .map(|p| p.in_flight)
            .max()
    }

    /// Verdicts of this family's sizes, and the sizes with a point that
    /// broke the bounds.
    fn judged(
        &self,
        family: &str,
        reference: usize,
    ) -> (Vec<crate::pool_search::Verdict>, Vec<usize>) {
        let slo = self.setup.slo.clone();
        let failed = failed_sizes(&self.result.points, family, slo.as_ref(), self.stall_s());
        (
            verdicts(&self.comparisons_of(family, reference), &failed),
            failed,
        )
    }

    /// Sizes the capacity search points at: the knee and how many the
    /// service serves at once; for a multiplexed family whose server
    /// allows S streams per connection, the requests in flight at the knee
    /// and at the client's load over S.
    fn guesses(&self, family: &str, in_flight: usize, upper: usize) -> Vec<usize> {
        let cap = &self.result.capacity;
        let knee = cap.knee_in_flight.unwrap_or(in_flight).min(in_flight);
        let mut g: Vec<usize> = match self.streams_allowed(family) {
            Some(s) => vec![knee.div_ceil(s), in_flight.div_ceil(s)],
            None => [Some(knee), cap.serves_at_once]
                .into_iter()
                .flatten()
                .collect(),
        };
        g = g.into_iter().map(|n| n.clamp(1, upper)).collect();
        g.dedup();
        g
    }

    /// The fewest connections worth judging: for a multiplexed family
    /// whose server allows S streams per connection, the requests in
    /// flight at the knee (or the client's load, if less, or if the
    /// service still scaled there) over S; else 1.
    fn least(&self, family: &str, in_flight: usize, upper: usize) -> usize {
        let knee = self.result.capacity.knee_in_flight.unwrap_or(in_flight);
        self.streams_allowed(family)
            .map_or(1, |s| knee.min(in_flight).div_ceil(s))
            .clamp(1, upper)
    }

    /// The fewest streams per connection a server allowed, for a
    /// multiplexed family (`None`: not multiplexed, or no limit seen).
    fn streams_allowed(&self, family: &str) -> Option<usize> {
        // `shared` is one connection whatever the streams: nothing to size.
        let multiplexed =
            Family::of(family).is_some_and(|f| f.multiplexed() && f != Family::Shared);
        self.result
            .points
            .iter()
            .filter_map(|p| p.streams_allowed)
            .min()
            .filter(|&s| s > 1 && multiplexed)
            .map(|s| s as usize)
    }

    /// What one comparison of `rounds` rounds costs.
    pub(super) fn compare_cost(&self, rounds: u32) -> std::time::Duration {
        self.run_cost() * (2 * rounds)
    }

    /// Time kept for the confirmations of this family and the ones after.
    pub(super) fn reserve(&self) -> std::time::Duration {
        self.compare_cost(CONFIRM_ROUNDS as u32) * self.families_left as u32
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

    fn out_of_time(&mut self, family: &str) -> Result<(), M::Error> {
        let why = match (self.gave_up, &self.result.stopped_early) {
            (true, Some(why)) => why.clone(),
            _ => "the budget ran out during the pool search; raise --budget".into(),
        };
        self.no_answer(family, why)
    }

    fn no_answer(&mut self, family: &str, why: String) -> Result<(), M::Error> {
        self.result
            .families_found
            .push(poolbench_model::FamilyAnswer {
                family: family.to_string(),
                pool_size: None,
                throughput_rps: None,
                p99_us: None,
                reason: Some(why),
            });
        Ok(())
    }
}

/// A family's strategy (its size filled in later; a name that is no
/// family is a pool, as the command line allows no other).
fn family_spec(family: &str) -> StrategySpec {
    family
        .parse::<Family>()
        .map_or(StrategySpec::Pool(None), Family::spec)
}

/// `spec` with `n` connections at the client's load of `in_flight`: a
/// pipelining family writes ⌈in flight ÷ n⌉ requests ahead on each, so
/// every request has a place in a window and the search is over N alone.
fn sized(spec: StrategySpec, n: usize, in_flight: usize) -> StrategySpec {
    match spec {
        StrategySpec::Pipeline(None, _) => {
            StrategySpec::Pipeline(Some(n), Some(in_flight.div_ceil(n.max(1)).max(1)))
        }
        other => other.with_size(n),
    }
}
