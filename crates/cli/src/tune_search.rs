//! The engine behind `tune`'s search (`poolbench_tune::Searcher`):
//! each point a short one-cell plan run by the engine and read by
//! `analyze`, and the probes the search makes before any load (the
//! server's limit, pipelining, the idle close). Progress goes to stderr,
//! one line a point.
use crate::Failure;
use poolbench_model::{
    Arrival, LoadModel, Plan, RatePhase, RatePoint, ServerIdle, ServerLimit, TunePhase, TunePoint,
};
use poolbench_tune::{Ask, Measure, Ran};
use std::time::Duration;

/// Runs the search's points with the engine.
pub(crate) struct EngineMeasure {
    /// What every point shares: the target, its request, the timeouts.
    pub(crate) base: Plan,
    pub(crate) quiet: bool,
    /// `--metrics-listen`: every point's cell, live.
    pub(crate) live: crate::metrics_listen::LiveOnly,
    /// A run has reached the target (later runs skip the preflight).
    pub(crate) reached: bool,
    /// `--threads` was given: every run keeps it.
    pub(crate) threads_fixed: bool,
}

impl Measure for EngineMeasure {
    type Error = Failure;

    fn run(&mut self, ask: &Ask) -> Result<Ran, Failure> {
        let mut plan = self.plan(ask);
        // The first point checks the target can be reached (exit 2 before
        // any load); after it, a preflight request given up on would stay
        // queued inside a frozen service.
        plan.preflight = !self.reached;
        self.reached = true;
        let mut run = poolbench_engine::run(&plan, None, &self.live).map_err(Failure::of_engine)?;
        poolbench_analysis::analyze(&mut run);
        // A run a signal cut short (or ended before its cell began) is no
        // measurement: the search, told so, ends with what it has.
        if self.interrupted() && run.cells.iter().all(|c| c.interrupted) {
            return Err(Failure::runtime("interrupted"));
        }
        let cell = run
            .cells
            .pop()
            .ok_or_else(|| Failure::runtime("the engine returned no cell"))?;
        Ok(Ran {
            cell,
            findings: run.findings,
        })
    }

    fn interrupted(&self) -> bool {
        poolbench_engine::interrupt::requested().is_some()
    }

    fn measured(&mut self, p: &TunePoint, at: Duration) {
        if !self.quiet {
            report(p, at);
        }
    }

    fn rate_measured(&mut self, p: &RatePoint, at: Duration) {
        if !self.quiet {
            report_rate(p, at);
        }
    }

    fn waiting(&mut self, why: &str, up_to: Duration) {
        if !self.quiet {
            eprintln!(
                "  recovery  {why}: waiting up to {:.0} s for the service to answer as before",
                up_to.as_secs_f64()
            );
        }
    }

    fn server_limit(&mut self) -> Result<Option<ServerLimit>, Failure> {
        let b = &self.base;
        let survey = crate::survey_read::read(&b.target, &b.target_options, b.connect_timeout)?;
        Ok(survey.map(|s| s.limit))
    }

    fn pipelining(&mut self, depth: usize, timeout: Duration) -> Result<(), String> {
        let answer = crate::tune_pipeline::probe(&self.base, depth, timeout);
        if let (Err(e), false) = (&answer, self.quiet) {
            eprintln!("pipeline: skipped: {depth} requests written ahead: {e}");
        }
        answer
    }

    fn server_idle(
        &mut self,
        probe: Option<Duration>,
        left: Duration,
    ) -> Result<Option<ServerIdle>, String> {
        if let (Some(max), false) = (probe, self.quiet) {
            eprintln!(
                "idle: the server does not say how long it keeps an idle connection; measuring (gaps up to {:.0} s)",
                max.as_secs_f64()
            );
        }
        crate::tune_idle::read(&self.base, probe, left)
    }
}

impl EngineMeasure {
    /// One point's plan: one cell, one run.
    fn plan(&self, ask: &Ask) -> Plan {
        let mut plan = self.base.clone();
        plan.strategies = vec![ask.strategy];
        plan.concurrency = vec![ask.in_flight];
        plan.duration = ask.window;
        plan.reps = 1;
        match (ask.threads, ask.rate) {
            (Some(n), _) => plan.threads = n,
            // An open loop's threads follow its rate, as in `run`: two
            // threads sharing the connections wake each other and lag by
            // milliseconds from 50,000 req/s (model::OPEN_RATE_PER_THREAD).
            (None, Some(rate)) if !self.threads_fixed => {
                plan.threads = LoadModel::open_threads(rate, plan.threads)
            }
            _ => {}
        }
        if ask.phase == TunePhase::Recovery {
            plan.warmup = Duration::ZERO;
        }
        if let Some(n) = ask.requests {
            // Each request waited for, up to the window.
            plan.requests = Some(n);
            plan.timeout = ask.window;
        }
        plan.hdr_intervals |= ask.by_second;
        if let Some(rate) = ask.rate {
            plan.load = LoadModel::Open {
                rate,
                arrival: Arrival::Constant,
            };
        }
        plan
    }
}

fn report(p: &TunePoint, at: Duration) {
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
        at.as_secs_f64()
    );
}

fn report_rate(p: &RatePoint, at: Duration) {
    let phase = match p.phase {
        RatePhase::Bracket => "bracket",
        RatePhase::Bisect => "bisect",
        RatePhase::Confirm => "confirm",
    };
    eprintln!(
        "  {phase:<8} {:>9} req/s held {:.0} s: {:>9} done/s  p99 {:>9}  backlog {:+.0} req/s  {}{}  [{:.0} s]",
        poolbench_report::fmt_rate(p.rate_rps),
        p.held_s,
        poolbench_report::fmt_rate(p.completed_rps),
        poolbench_report::fmt_duration_us(p.p99_us),
        p.backlog_growth_rps,
        p.verdict.name(),
        p.why.as_deref().map_or(String::new(), |w| format!(": {w}")),
        at.as_secs_f64()
    );
}

fn phase_name(p: TunePhase) -> &'static str {
    match p {
        TunePhase::Capacity => "capacity",
        TunePhase::Recovery => "recovery",
        TunePhase::Pool => "pool",
        TunePhase::Confirm => "confirm",
    }
}
