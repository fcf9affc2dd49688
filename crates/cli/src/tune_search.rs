//! The search loop of `tune`: each point a short run of the engine, the
//! next point chosen by the analysis (`poolbench_analysis::tune`), within
//! the time budget. Phase 1 measures the service's capacity with one
//! connection per request in flight; phase 2 bisects each family's pool
//! size at the client's load; then the pick and its neighbours are
//! confirmed with repetitions. Progress goes to stderr, one line a point.
use crate::Failure;
use poolbench_analysis::tune as decide;
use poolbench_engine::EngineError;
use poolbench_model::{
    Arrival, CellResult, LoadModel, Machine, Pitfall, Plan, Slo, TuneLoad, TunePhase, TunePoint,
    TuneResult, TUNE_SCHEMA_VERSION,
};
use poolbench_pool::StrategySpec;
use std::time::{Duration, Instant};

/// What the search is given.
pub(crate) struct SearchSetup {
    pub(crate) base: Plan,
    pub(crate) load: TuneLoad,
    pub(crate) slo: Option<Slo>,
    pub(crate) budget: Duration,
    pub(crate) families: Vec<String>,
    pub(crate) most_in_flight: usize,
    pub(crate) quiet: bool,
    /// `--metrics-listen`: every point's cell, live.
    pub(crate) live: crate::metrics_listen::LiveOnly,
}

/// Findings every search makes on purpose (a pool below the load, one run
/// per point) and that say nothing about the service; the pool search's
/// own `pool-bound` is an inference of tune's (inferences.rs).
const EXPECTED: [&str; 6] = [
    "few-samples",
    "pool-bound",
    "pool-queueing",
    "target-saturated",
    "closed-loop-ceiling",
    "unequal-caps",
];

/// Share of the budget by the end of phase 1.
const CAPACITY_SHARE: f64 = 0.45;
/// Longest the search waits for a failed service to answer again.
const RECOVERY: Duration = Duration::from_secs(20);

pub(crate) struct Search {
    pub(crate) setup: SearchSetup,
    pub(crate) started: Instant,
    pub(crate) result: TuneResult,
    /// Most requests in flight phase 1 may raise to (lowered when the
    /// generator reaches its own limit).
    pub(crate) most: usize,
    /// Families not searched yet, the current one included.
    pub(crate) families_left: usize,
    /// Runs made so far, and their wall time: what a run really costs.
    runs: (u32, Duration),
}

impl Search {
    pub(crate) fn new(setup: SearchSetup) -> Search {
        let result = TuneResult {
            schema_version: TUNE_SCHEMA_VERSION,
            target: setup.base.target.redacted(),
            machine: Machine::current(),
            started_at: poolbench_model::duration::now_rfc3339(),
            load: setup.load,
            slo: setup.slo.clone(),
            budget_s: setup.budget.as_secs_f64(),
            families: setup.families.clone(),
            capacity: Default::default(),
            recommendation: None,
            reason: None,
            families_found: Vec::new(),
            inferences: Vec::new(),
            points: Vec::new(),
            findings: Vec::new(),
            stopped_early: None,
            elapsed_s: 0.0,
        };
        Search {
            most: setup.most_in_flight,
            families_left: setup.families.len(),
            runs: (0, Duration::ZERO),
            setup,
            started: Instant::now(),
            result,
        }
    }

    /// The whole search; the result before its conclusions (`conclude`).
    pub(crate) fn run(mut self) -> Result<TuneResult, Failure> {
        self.capacity_phase()?;
        let families = self.setup.families.clone();
        for (i, family) in families.iter().enumerate() {
            if self.stopped() {
                break;
            }
            self.families_left = families.len() - i;
            self.family(family)?;
        }
        if poolbench_engine::interrupt::requested().is_some() && self.result.stopped_early.is_none()
        {
            self.result.stopped_early = Some("interrupted".into());
        }
        self.result.elapsed_s = self.started.elapsed().as_secs_f64();
        Ok(self.result)
    }

    /// Whether the search must end now: interrupted, or out of time.
    pub(crate) fn stopped(&mut self) -> bool {
        if poolbench_engine::interrupt::requested().is_some() {
            self.result.stopped_early = Some("interrupted".into());
            return true;
        }
        self.left(1.0) < self.run_cost()
    }

    /// Time left before `share` of the budget is spent.
    pub(crate) fn left(&self, share: f64) -> Duration {
        self.setup
            .budget
            .mul_f64(share)
            .saturating_sub(self.started.elapsed())
    }

    /// What one run of a point costs: warm-up, window, and setting up, or
    /// the mean wall time of the runs so far where that is more.
    pub(crate) fn run_cost(&self) -> Duration {
        let planned = self.setup.base.warmup + self.window() + Duration::from_millis(300);
        match self.runs {
            (0, _) => planned,
            (n, wall) => planned.max(wall / n),
        }
    }

    /// The measured window of one run: 1 s, or 40 service times up to 3 s.
    fn window(&self) -> Duration {
        let s = self.result.capacity.service_time_us.unwrap_or(0.0) / 1e6;
        Duration::from_secs_f64((40.0 * s).clamp(1.0, 3.0))
    }

    /// Phase 1: raise, then bisect, the requests in flight.
    fn capacity_phase(&mut self) -> Result<(), Failure> {
        loop {
            let want = self.want();
            let limits = decide::CapacityLimits {
                want: want.min(self.most),
                most: self.most,
            };
            let Some(level) =
                decide::next_level(&self.result.points, self.setup.slo.as_ref(), limits)
            else {
                return Ok(());
            };
            // Keep time for a few pool points and every confirmation.
            let after = self.run_cost() * (4 + 9 * self.setup.families.len() as u32);
            if self.stopped()
                || self.left(CAPACITY_SHARE) < self.run_cost()
                || self.left(1.0) < after
            {
                self.note_early(format!(
                    "the capacity search ran out of its share of the budget at {level} in flight"
                ));
                return Ok(());
            }
            let point = self.measure(
                TunePhase::Capacity,
                StrategySpec::Pool(Some(level)),
                level,
                1,
                2,
            )?;
            self.result.capacity =
                decide::capacity(&self.result.points, self.setup.slo.as_ref(), false);
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
            TuneLoad::Rate(r) => match self.result.capacity.service_time_us {
                Some(s) => ((2.0 * r * s / 1e6).ceil() as usize).max(8),
                None => 64,
            },
        }
    }

    fn note_early(&mut self, why: String) {
        self.result.stopped_early.get_or_insert(why);
    }

    /// After a point that failed, short probes of one request at a time
    /// until the service answers as it did, so its freeze is not counted
    /// against the next point.
    pub(crate) fn recover_if_failed(&mut self, p: &TunePoint) -> Result<(), Failure> {
        let stall_s = decide::stall_threshold(self.result.capacity.service_time_us);
        if decide::failure(p, self.setup.slo.as_ref(), stall_s).is_none() {
            return Ok(());
        }
        let until = Instant::now() + RECOVERY;
        let alone = self.result.capacity.service_time_us;
        while Instant::now() < until && poolbench_engine::interrupt::requested().is_none() {
            let probe = self.run_point(
                TunePhase::Recovery,
                StrategySpec::Pool(Some(1)),
                1,
                1,
                1,
                Duration::from_millis(400),
            )?;
            let healthy = decide::failure(&probe, None, stall_s.max(0.3)).is_none()
                && probe.requests > 0
                && alone.is_none_or(|s| probe.mean_us <= 3.0 * s + 1000.0);
            if healthy {
                return Ok(());
            }
        }
        self.note_early("the service did not recover within 20 s of a failing point".into());
        Ok(())
    }

    /// Measure one point: `runs` runs at least, more (up to `most_runs`)
    /// while its throughput's interval is wider than 5%.
    pub(crate) fn measure(
        &mut self,
        phase: TunePhase,
        strategy: StrategySpec,
        in_flight: usize,
        runs: usize,
        most_runs: usize,
    ) -> Result<TunePoint, Failure> {
        let window = self.window();
        self.run_point(phase, strategy, in_flight, runs, most_runs, window)
    }

    fn run_point(
        &mut self,
        phase: TunePhase,
        strategy: StrategySpec,
        in_flight: usize,
        runs: usize,
        most_runs: usize,
        window: Duration,
    ) -> Result<TunePoint, Failure> {
        let plan = self.plan(strategy, in_flight, window, phase);
        let rate = self.rate();
        let mut cells: Vec<CellResult> = Vec::new();
        loop {
            cells.push(self.run_once(&plan)?);
            let point = decide::point_of(phase, rate, &cells);
            let enough = cells.len() >= runs
                && (decide::relative_ci(&point) <= 0.05
                    || cells.len() >= most_runs
                    || self.left(1.0) < self.run_cost() * 2
                    || point.requests == 0);
            if enough || poolbench_engine::interrupt::requested().is_some() {
                self.report(&point);
                self.result.points.push(point.clone());
                return Ok(point);
            }
        }
    }

    fn rate(&self) -> Option<f64> {
        match self.setup.load {
            TuneLoad::Rate(r) => Some(r),
            TuneLoad::Concurrency(_) => None,
        }
    }

    /// One point's plan: one cell, one run.
    fn plan(
        &self,
        strategy: StrategySpec,
        in_flight: usize,
        window: Duration,
        phase: TunePhase,
    ) -> Plan {
        let mut plan = self.setup.base.clone();
        plan.strategies = vec![strategy];
        plan.concurrency = vec![in_flight];
        plan.duration = window;
        plan.reps = 1;
        if phase == TunePhase::Recovery {
            plan.warmup = Duration::ZERO;
        }
        if let (Some(rate), TunePhase::Pool | TunePhase::Confirm) = (self.rate(), phase) {
            plan.load = LoadModel::Open {
                rate,
                arrival: Arrival::Constant,
            };
        }
        plan
    }

    /// One run of the engine; its findings kept, its cell returned.
    fn run_once(&mut self, plan: &Plan) -> Result<CellResult, Failure> {
        let started = Instant::now();
        let outcome = poolbench_engine::run(plan, None, &self.setup.live);
        self.runs = (self.runs.0 + 1, self.runs.1 + started.elapsed());
        let mut run = outcome.map_err(|e| match e {
            EngineError::Runtime(_) => Failure::runtime(e),
            _ => Failure::input(e),
        })?;
        poolbench_analysis::analyze(&mut run);
        for f in run
            .pitfalls
            .into_iter()
            .filter(|f| !EXPECTED.contains(&f.id.as_str()))
        {
            keep_finding(&mut self.result.findings, f);
        }
        run.cells
            .pop()
            .ok_or_else(|| Failure::runtime("the engine returned no cell"))
    }

    fn report(&self, p: &TunePoint) {
        if self.setup.quiet {
            return;
        }
        let ci = p.throughput_ci95.map_or(String::new(), |c| {
            format!(" ±{:.0}%", 100.0 * c / p.throughput_rps.max(1e-9))
        });
        eprintln!(
            "  {:<9} {:<18} c={:<5} {:>9} req/s{ci:<6} p99 {:>9}  {:.1}% errors  [{:.0} s]",
            phase_name(p.phase),
            p.strategy,
            p.in_flight,
            poolbench_report::fmt_rate(p.throughput_rps),
            poolbench_report::fmt_duration_us(p.p99_us),
            p.error_rate * 100.0,
            self.started.elapsed().as_secs_f64()
        );
    }
}

fn phase_name(p: TunePhase) -> &'static str {
    match p {
        TunePhase::Capacity => "capacity",
        TunePhase::Recovery => "recovery",
        TunePhase::Pool => "pool",
        TunePhase::Confirm => "confirm",
    }
}

/// The generator's own limit, if this point reached it: all the cores
/// busy with poolbench, or poolbench's own stalls (20 ms or more) half the p99.
fn generator_limit(p: &TunePoint) -> Option<String> {
    if p.generator_cpu.is_some_and(|c| c >= 0.9) {
        return Some(format!(
            "poolbench used {:.0}% of the cores (generator-saturated)",
            100.0 * p.generator_cpu.unwrap_or(0.0)
        ));
    }
    (p.hiccup_p99_us >= 20_000.0 && p.hiccup_p99_us >= 0.5 * p.p99_us).then(|| {
        format!(
            "poolbench itself stalled {:.1} ms (p99 of its hiccups; generator-hiccups)",
            p.hiccup_p99_us / 1000.0
        )
    })
}

/// Add a finding's evidence to the one of the same id (five lines at most).
fn keep_finding(found: &mut Vec<Pitfall>, f: Pitfall) {
    match found.iter_mut().find(|g| g.id == f.id) {
        Some(g) => {
            for (cell, line) in f.cells.into_iter().zip(f.evidence) {
                if g.evidence.len() < 5 && !g.evidence.contains(&line) {
                    g.cells.push(cell);
                    g.evidence.push(line);
                }
            }
        }
        None => found.push(f),
    }
}
