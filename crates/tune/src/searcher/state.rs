//! The search's state and its one seam with the world: a [`Measure`] that
//! runs one point (the engine, in the binary; a simulated service, in the
//! tests) and a [`Clock`], both handed in, so the whole loop runs in
//! milliseconds against simulated services.
use crate::capacity::{capacity, stall_threshold};
use crate::point::{point_of, relative_ci};
use poolbench_analysis::findings::{generator_hiccups, generator_saturated};
use poolbench_model::findings::Id;
use poolbench_model::{
    CellResult, Finding, RatePoint, ServerIdle, ServerLimit, Slo, StrategySpec, TuneLoad,
    TunePhase, TunePoint, TuneResult,
};
use std::time::{Duration, Instant};

/// One run the search asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    pub phase: TunePhase,
    pub strategy: StrategySpec,
    /// Closed-loop workers (open loop: the cap on requests in flight).
    pub in_flight: usize,
    /// The measured window (a warm-up before it, except in recovery).
    pub window: Duration,
    /// Open loop at this rate (the pool phases of a `--rate` search).
    pub rate: Option<f64>,
    /// A count instead of a window: this many requests, each waited for
    /// up to `window` (a recovery ping: a request given up on would stay
    /// queued inside a frozen service and keep it frozen).
    pub requests: Option<u64>,
    /// Load threads (`None`: the plan's own).
    pub threads: Option<usize>,
    /// Keep the latency of each second of the window (the rate search
    /// compares the early part of a hold with the late).
    pub by_second: bool,
}

impl Ask {
    /// One request alone on one connection, waited for up to `window`: a
    /// recovery ping (a request given up on would stay queued inside a
    /// frozen service and keep it frozen).
    pub fn ping(window: Duration, threads: Option<usize>) -> Ask {
        Ask {
            phase: TunePhase::Recovery,
            strategy: StrategySpec::Pool(Some(1)),
            in_flight: 1,
            window,
            rate: None,
            requests: Some(1),
            threads,
            by_second: false,
        }
    }
}

/// What one run produced: its cell, and the findings `analyze` made of it.
pub struct Ran {
    pub cell: CellResult,
    pub findings: Vec<Finding>,
}

/// Runs points: the engine in the binary, a simulated service in tests.
pub trait Measure {
    type Error;
    /// One run of one cell. A run a stop ([`Measure::interrupted`]) cut
    /// short or kept from starting is no measurement: an error, after
    /// which the search ends with what it had.
    fn run(&mut self, ask: &Ask) -> Result<Ran, Self::Error>;
    /// Whether the user asked to stop (Ctrl-C).
    fn interrupted(&self) -> bool;
    /// A point is done (for progress); `at`: time since the search began.
    fn measured(&mut self, _point: &TunePoint, _at: Duration) {}
    /// A rate point is done (`--find-rate`, for progress).
    fn rate_measured(&mut self, _point: &RatePoint, _at: Duration) {}
    /// The search waits for the service (for progress): why, and how long
    /// at most.
    fn waiting(&mut self, _why: &str, _up_to: Duration) {}
    /// Before any load (`--replicas`): the server's own connection limit,
    /// `None` where it names none. An unreachable server is the error.
    fn server_limit(&mut self) -> Result<Option<ServerLimit>, Self::Error> {
        Ok(None)
    }
    /// Before any load (`-s pipeline`): whether the server answers `depth`
    /// requests written ahead on one connection, in order, each within
    /// `timeout`; `Err`: what it did instead.
    fn pipelining(&mut self, _depth: usize, _timeout: Duration) -> Result<(), String> {
        Ok(())
    }
    /// Before any load: what the server does with idle connections, read
    /// from its settings (`measure_up_to: None`) or measured on idle
    /// connections with gaps up to that long, within `left`. `Ok(None)`:
    /// a protocol this is not looked at for.
    fn server_idle(
        &mut self,
        _measure_up_to: Option<Duration>,
        _left: Duration,
    ) -> Result<Option<ServerIdle>, String> {
        Ok(None)
    }
}

/// Time, as the search sees it.
pub trait Clock {
    /// Time since the search began.
    fn now(&self) -> Duration;
    fn sleep(&self, d: Duration);
}

/// The wall clock.
pub struct WallClock(Instant);

impl WallClock {
    pub fn start() -> WallClock {
        WallClock(Instant::now())
    }
}

impl Clock for WallClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
}

/// What the search is given.
#[derive(Clone, Debug)]
pub struct Setup {
    pub load: TuneLoad,
    pub slo: Option<Slo>,
    /// Time for measuring; waiting for a frozen service is not billed.
    pub budget: Duration,
    /// Longest wait for a failed service to answer as before.
    pub recovery: Duration,
    pub families: Vec<String>,
    /// Most requests in flight (and connections) the search may use.
    pub most_in_flight: usize,
    /// The warm-up before each run's window (none in recovery).
    pub warmup: Duration,
    /// Families not to search, with why; the pipelining probe adds
    /// `pipeline` when the server does not answer pipelined requests.
    pub skipped: Vec<(String, String)>,
    /// What to ask the server before any load (probes.rs).
    pub probes: crate::probe::Probes,
    /// Compare one load thread with this many (one per core) once the
    /// generator is busy, and keep the better (`None`: the threads are
    /// given, or there is one core).
    pub compare_threads: Option<usize>,
}

/// Findings every search makes on purpose (a pool below the load, one run
/// per point) and that say nothing about the service; the pool search's
/// own `pool-bound` is an inference of tune's (inferences.rs).
pub(crate) const EXPECTED: [Id; 6] = [
    Id::FewSamples,
    Id::PoolBound,
    Id::PoolQueueing,
    Id::TargetSaturated,
    Id::ClosedLoopCeiling,
    Id::UnequalCaps,
];

/// The search in progress.
pub struct Searcher<M: Measure, C: Clock> {
    pub(crate) setup: Setup,
    pub(crate) measure: M,
    pub(crate) clock: C,
    pub(crate) result: TuneResult,
    /// Most requests in flight phase 1 may raise to (lowered when the
    /// generator reaches its own limit).
    pub(crate) most: usize,
    /// Families not searched yet, the current one included.
    pub(crate) families_left: usize,
    /// Runs made so far, and their time: what a run really costs.
    runs: (u32, Duration),
    /// Time spent waiting for the service to recover (not billed).
    pub(crate) waited: Duration,
    /// The service failed and did not recover: nothing more is measured.
    pub(crate) gave_up: bool,
    /// Load threads of every run (`None`: the plan's own); one until the
    /// probe (threads.rs) decides.
    pub(crate) threads: Option<usize>,
}

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// `result`: the skeleton (target, machine, load …) the search fills.
    pub fn new(setup: Setup, result: TuneResult, measure: M, clock: C) -> Self {
        Searcher {
            most: setup.most_in_flight,
            families_left: setup.families.len(),
            runs: (0, Duration::ZERO),
            waited: Duration::ZERO,
            gave_up: false,
            threads: setup.compare_threads.map(|_| 1),
            setup,
            measure,
            clock,
            result,
        }
    }

    /// Whether the search must end now: interrupted, given up, or out of time.
    pub(crate) fn stopped(&mut self) -> bool {
        if self.measure.interrupted() {
            self.result.stopped_early = Some("interrupted".into());
            return true;
        }
        self.gave_up || self.left(1.0) < self.run_cost()
    }

    /// Measuring time left before `share` of the budget is spent.
    pub(crate) fn left(&self, share: f64) -> Duration {
        let billed = self.clock.now().saturating_sub(self.waited);
        self.setup.budget.mul_f64(share).saturating_sub(billed)
    }

    /// What one run of a point costs: warm-up, window, and setting up, or
    /// the mean time of the runs so far where that is more.
    pub(crate) fn run_cost(&self) -> Duration {
        let planned = self.setup.warmup + self.window() + Duration::from_millis(300);
        match self.runs {
            (0, _) => planned,
            (n, wall) => planned.max(wall / n),
        }
    }

    /// The service time alone, seconds, once known.
    pub(crate) fn service_s(&self) -> Option<f64> {
        self.result.capacity.service_time_us.map(|s| s / 1e6)
    }

    /// The measured window of one run: 1 s, or 40 service times up to 3 s;
    /// for slow services (25 ms or more, measured by Little's law) four
    /// service times, at least 1 s and at most 3 s.
    pub(crate) fn window(&self) -> Duration {
        let s = self.service_s().unwrap_or(0.0);
        let many = if s >= 0.025 { 4.0 } else { 40.0 };
        Duration::from_secs_f64((many * s).clamp(1.0, 3.0))
    }

    pub(crate) fn stall_s(&self) -> f64 {
        stall_threshold(self.result.capacity.service_time_us)
    }

    /// Open loop: the client's rate.
    pub(crate) fn rate(&self) -> Option<f64> {
        match self.setup.load {
            TuneLoad::Rate(r) => Some(r),
            TuneLoad::Concurrency(_) => None,
        }
    }

    pub(crate) fn note_early(&mut self, why: String) {
        self.result.stopped_early.get_or_insert(why);
    }

    /// Measure one point: `runs` runs at least, more (up to `most_runs`)
    /// while its throughput's interval is wider than 5%.
    pub(crate) fn measure(
        &mut self,
        phase: TunePhase,
        strategy: StrategySpec,
        in_flight: usize,
        (runs, most_runs): (usize, usize),
    ) -> Result<TunePoint, M::Error> {
        let window = self.window();
        self.run_point(phase, strategy, in_flight, (runs, most_runs), window)
    }

    pub(crate) fn run_point(
        &mut self,
        phase: TunePhase,
        strategy: StrategySpec,
        in_flight: usize,
        (runs, most_runs): (usize, usize),
        window: Duration,
    ) -> Result<TunePoint, M::Error> {
        let ask = Ask {
            window,
            ..self.ask(phase, strategy, in_flight)
        };
        self.run_ask(&ask, (runs, most_runs))
    }

    /// A run of `strategy` at `in_flight`, for the measured window (at the
    /// client's rate in the pool phases of a `--rate` search).
    pub(crate) fn ask(&self, phase: TunePhase, strategy: StrategySpec, in_flight: usize) -> Ask {
        let rate = self.rate();
        Ask {
            phase,
            strategy,
            in_flight,
            window: self.window(),
            rate: rate.filter(|_| matches!(phase, TunePhase::Pool | TunePhase::Confirm)),
            requests: None,
            threads: self.threads,
            by_second: false,
        }
    }

    /// Run `ask` `runs` times at least, more (up to `most_runs`) while its
    /// throughput's interval is wider than 5%; the point kept.
    pub(crate) fn run_ask(
        &mut self,
        ask: &Ask,
        (runs, most_runs): (usize, usize),
    ) -> Result<TunePoint, M::Error> {
        let (phase, rate) = (ask.phase, self.rate());
        let mut cells: Vec<CellResult> = Vec::new();
        loop {
            cells.push(self.run_once(ask)?);
            let point = point_of(phase, rate, &cells);
            let enough = cells.len() >= runs
                && (relative_ci(&point) <= 0.05
                    || cells.len() >= most_runs
                    || self.left(1.0) < self.run_cost() * 2
                    || point.requests == 0);
            if enough || self.measure.interrupted() {
                self.measure.measured(&point, self.clock.now());
                self.result.points.push(point.clone());
                if phase == TunePhase::Capacity {
                    let slo = self.setup.slo.clone();
                    self.result.capacity = capacity(&self.result.points, slo.as_ref(), false);
                }
                return Ok(point);
            }
        }
    }

    /// One run; its findings kept (those a search makes on purpose left
    /// out), its cell returned.
    pub(crate) fn run_once(&mut self, ask: &Ask) -> Result<CellResult, M::Error> {
        let started = self.clock.now();
        let ran = self.measure.run(ask)?;
        let took = self.clock.now().saturating_sub(started);
        if ask.phase != TunePhase::Recovery {
            self.runs = (self.runs.0 + 1, self.runs.1 + took);
        }
        for f in ran
            .findings
            .into_iter()
            .filter(|f| !EXPECTED.contains(&f.id))
        {
            keep_finding(&mut self.result.findings, f);
        }
        Ok(ran.cell)
    }
}

/// A search's end: its error, unless a stop came first (the run the stop
/// cut fails, and the search then ends with what it had); a stop noted in
/// `stopped_early`.
pub(crate) fn end_of_search<M: Measure>(
    measure: &M,
    searched: Result<(), M::Error>,
    stopped_early: &mut Option<String>,
) -> Result<(), M::Error> {
    match searched {
        Err(_) if measure.interrupted() => {}
        other => other?,
    }
    if measure.interrupted() && stopped_early.is_none() {
        *stopped_early = Some("interrupted".into());
    }
    Ok(())
}

/// The generator's own limit, if this point reached it: all the cores
/// busy with poolbench, or poolbench's own stalls long next to the p99.
/// (One load thread busy is not a limit: the threads were compared when
/// it became busy, threads.rs, and a busy thread still gathers more
/// answers a wake-up as requests in flight rise.)
pub(crate) fn generator_limit(p: &TunePoint) -> Option<String> {
    if p.generator_cpu
        .is_some_and(|c| generator_saturated::saturated(c, None))
    {
        return Some(format!(
            "poolbench used {:.0}% of the cores ({})",
            100.0 * p.generator_cpu.unwrap_or(0.0),
            Id::GeneratorSaturated
        ));
    }
    generator_hiccups::limits(p.hiccup_p99_us, p.p99_us).then(|| {
        format!(
            "poolbench itself stalled {:.1} ms (p99 of its hiccups; {})",
            p.hiccup_p99_us / 1000.0,
            Id::GeneratorHiccups
        )
    })
}

/// Add a finding's evidence to the one of the same id (five lines at most,
/// one per cell: a cell run again says the same).
pub(crate) fn keep_finding(found: &mut Vec<Finding>, f: Finding) {
    match found.iter_mut().find(|g| g.id == f.id) {
        Some(g) => {
            for (cell, line) in f.cells.into_iter().zip(f.evidence) {
                if g.evidence.len() < 5 && !g.cells.contains(&cell) {
                    g.cells.push(cell);
                    g.evidence.push(line);
                }
            }
        }
        None => found.push(f),
    }
}
