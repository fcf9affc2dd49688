//! The rate search's loop: the service alone, then the rates `next`
//! chooses, each failure waited out, within the budget.
use super::judge::judge;
use super::next::{next, Next};
use crate::searcher::{end_of_search, keep_finding, Ask, Clock, Measure, EXPECTED};
use poolbench_model::findings::Id;
use poolbench_model::{
    CellResult, RatePhase, RatePoint, RateResult, RateVerdict, Slo, StrategySpec, TunePhase,
};
use std::time::Duration;

/// What the rate search is given.
#[derive(Clone, Debug)]
pub struct RateSetup {
    pub slo: Slo,
    /// Time for measuring; waiting for a failed service is not billed.
    pub budget: Duration,
    /// Longest wait for a failed service to answer alone again.
    pub recovery: Duration,
    /// The strategy every point runs.
    pub strategy: StrategySpec,
    /// The open loop's cap on requests in flight.
    pub most_in_flight: usize,
    /// The warm-up before each hold.
    pub warmup: Duration,
    /// Each search point's hold (`None`: from the service's latency,
    /// [`default_hold`]); the answer's repetitions hold twice as long.
    pub hold: Option<Duration>,
    /// Load threads (`None`: the plan's own).
    pub threads: Option<usize>,
}

/// Highest rate tried, req/s.
const MOST_RATE: f64 = 10_000_000.0;
/// The first rate: this share of what one request at a time carried.
const START_SHARE: f64 = 0.8;
/// Least time between two recovery pings.
const PING_GAP: Duration = Duration::from_millis(500);
/// The window of the first, one-at-a-time measurement.
const ALONE: Duration = Duration::from_secs(1);
/// The open loop's cap on requests in flight: this many times what the
/// rate needs by Little's law at the latency of the highest rate held …
const CAP_FACTOR: f64 = 4.0;
/// … and this many more.
const CAP_SLACK: usize = 8;

/// Requests in flight a point at `rate` may have: four times what the
/// rate needs at `latency_us` (Little's law), and 8 more, at most `most`.
/// A point that needs more is one whose latency quadrupled: a client
/// sized for its load would queue there too, and a service that freezes
/// under a pile of requests (FastAPI with synchronous SQLAlchemy: each
/// request queued above its pool holds the event loop 30 s) is not
/// handed hundreds of them, which it would take many minutes to work off.
pub fn in_flight_cap(rate: f64, latency_us: f64, most: usize) -> usize {
    let needed = rate * latency_us / 1e6;
    ((CAP_FACTOR * needed).ceil() as usize + CAP_SLACK).min(most.max(1))
}

/// A search point's hold when not given: 100 mean latencies of the
/// service alone, from 3 s to 15 s (enough completions for a p99 per
/// third, and a backlog of 1% a second to show).
pub fn default_hold(alone_mean_us: f64) -> Duration {
    Duration::from_secs_f64((100.0 * alone_mean_us / 1e6).clamp(3.0, 15.0))
}

/// The rate search in progress.
pub struct RateSearcher<M: Measure, C: Clock> {
    setup: RateSetup,
    measure: M,
    clock: C,
    result: RateResult,
    /// Mean latency of one request alone, µs.
    alone_us: f64,
    /// Time spent waiting for the service to recover (not billed).
    waited: Duration,
}

impl<M: Measure, C: Clock> RateSearcher<M, C> {
    /// `result`: the skeleton (target, strategy, SLO …) the search fills.
    pub fn new(setup: RateSetup, result: RateResult, measure: M, clock: C) -> Self {
        RateSearcher {
            setup,
            measure,
            clock,
            result,
            alone_us: 0.0,
            waited: Duration::ZERO,
        }
    }

    /// The whole search, concluded.
    pub fn run(mut self) -> Result<RateResult, M::Error> {
        self.result.most_in_flight = self.setup.most_in_flight;
        self.result.budget_s = self.setup.budget.as_secs_f64();
        let searched = match self.alone() {
            Ok(Some(start)) => self.search(start),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        end_of_search(&self.measure, searched, &mut self.result.stopped_early)?;
        self.result.elapsed_s = self.clock.now().as_secs_f64();
        super::answer::conclude(&mut self.result);
        Ok(self.result)
    }

    /// One request at a time for a second: the service's latency, which
    /// sets the hold and the first rate (`None`: it did not answer).
    fn alone(&mut self) -> Result<Option<f64>, M::Error> {
        let ask = Ask {
            phase: TunePhase::Capacity,
            strategy: StrategySpec::Pool(Some(1)),
            in_flight: 1,
            window: ALONE,
            rate: None,
            requests: None,
            threads: self.setup.threads,
            by_second: false,
        };
        let cell = self.run_once(&ask)?;
        if cell.ok == 0 {
            self.result.stopped_early = Some(format!(
                "the service answered no request sent one at a time in {:.0} s ({} errors)",
                cell.duration_s, cell.errors.total
            ));
            return Ok(None);
        }
        self.alone_us = cell.latency_us.mean;
        let hold = self.setup.hold.unwrap_or(default_hold(self.alone_us));
        self.result.hold_s = hold.as_secs_f64();
        self.result.confirm_hold_s = 2.0 * self.result.hold_s;
        let one = cell.ok as f64 / cell.duration_s.max(1e-3);
        Ok(Some((START_SHARE * one).max(super::next::LEAST_RATE)))
    }

    fn search(&mut self, start: f64) -> Result<(), M::Error> {
        loop {
            if self.measure.interrupted() {
                return Ok(());
            }
            let Next::Hold(rate, phase) = next(&self.result.rate_points, start, MOST_RATE) else {
                return Ok(());
            };
            let hold = Duration::from_secs_f64(match phase {
                RatePhase::Confirm => self.result.confirm_hold_s,
                _ => self.result.hold_s,
            });
            if self.left() < self.cost(hold) {
                self.result.stopped_early = Some(format!(
                    "the budget ran out before {} req/s could be held{}",
                    poolbench_model::format::thousands(rate),
                    match phase {
                        RatePhase::Confirm => " again to confirm it",
                        _ => "",
                    }
                ));
                return Ok(());
            }
            let p = self.hold(rate, phase, hold)?;
            if !p.verdict.holds()
                && p.verdict != RateVerdict::GeneratorLimited
                && !self.recover(&p)?
            {
                return Ok(());
            }
        }
    }

    /// Measuring time left in the budget.
    fn left(&self) -> Duration {
        let billed = self.clock.now().saturating_sub(self.waited);
        self.setup.budget.saturating_sub(billed)
    }

    /// What holding a rate costs: its warm-up, the hold, and setting up.
    fn cost(&self, hold: Duration) -> Duration {
        self.setup.warmup + hold + Duration::from_millis(300)
    }

    /// The mean latency of the highest rate held so far (that of one
    /// request alone before any), µs.
    fn latency_held_us(&self) -> f64 {
        let lo = super::next::bounds(&self.result.rate_points).lo;
        let at: Vec<f64> = self
            .result
            .rate_points
            .iter()
            .filter(|p| Some(p.rate_rps) == lo && p.verdict.holds())
            .map(|p| p.mean_us)
            .collect();
        match at.is_empty() {
            true => self.alone_us,
            false => at.iter().sum::<f64>() / at.len() as f64,
        }
    }

    /// `rate` held once, judged, kept.
    fn hold(&mut self, rate: f64, phase: RatePhase, hold: Duration) -> Result<RatePoint, M::Error> {
        let cap = in_flight_cap(rate, self.latency_held_us(), self.setup.most_in_flight);
        let ask = Ask {
            phase: TunePhase::Capacity,
            strategy: self.setup.strategy,
            in_flight: cap,
            window: hold,
            rate: Some(rate),
            requests: None,
            threads: self.setup.threads,
            by_second: true,
        };
        let cell = self.run_once(&ask)?;
        let p = judge(phase, (rate, cap), &cell, &self.setup.slo);
        self.measure.rate_measured(&p, self.clock.now());
        self.result.rate_points.push(p.clone());
        Ok(p)
    }

    /// One run; its findings kept (those every search makes on purpose
    /// left out: a rate search holds rates the service cannot, so a rate
    /// not achieved is its verdict's to say).
    fn run_once(&mut self, ask: &Ask) -> Result<CellResult, M::Error> {
        let ran = self.measure.run(ask)?;
        let expected = |id: &Id| EXPECTED.contains(id) || *id == Id::NotAchieved;
        for f in ran.findings.into_iter().filter(|f| !expected(&f.id)) {
            keep_finding(&mut self.result.findings, f);
        }
        Ok(ran.cell)
    }

    /// After a failing point, one-request pings (each waited for: a
    /// request given up on stays queued inside a frozen service) until
    /// one is answered without error within ten times the latency alone
    /// (and 20 ms more). `false`: the service did not come back within
    /// `--recovery`, and the search ends, saying so.
    fn recover(&mut self, p: &RatePoint) -> Result<bool, M::Error> {
        let began = self.clock.now();
        let until = began + self.setup.recovery;
        let why = p.why.clone().unwrap_or_default();
        let rate = poolbench_model::format::thousands(p.rate_rps);
        self.measure
            .waiting(&format!("{rate} req/s: {why}"), self.setup.recovery);
        let mut back = false;
        while !back && self.clock.now() < until && !self.measure.interrupted() {
            let t0 = self.clock.now();
            let window = until.saturating_sub(t0).max(PING_GAP);
            let ping = Ask::ping(window, self.setup.threads);
            let c = self.run_once(&ping)?;
            back = c.ok > 0
                && c.errors.total == 0
                && c.latency_us.mean <= 10.0 * self.alone_us + 20_000.0;
            let spent = self.clock.now().saturating_sub(t0);
            if !back && spent < PING_GAP {
                self.clock.sleep(PING_GAP - spent);
            }
        }
        self.waited += self.clock.now().saturating_sub(began);
        if !back && !self.measure.interrupted() {
            self.result.stopped_early = Some(format!(
                "the service failed at {rate} req/s ({}: {why}) and had not recovered {:.0} s later",
                p.verdict.name(),
                self.setup.recovery.as_secs_f64()
            ));
        }
        Ok(back)
    }
}
