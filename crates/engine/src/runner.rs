//! The grid: every cell in turn on the engine's own runtime.
use crate::cell_result::cell_result;
use crate::cell_run::{run_cell, CellOutcome};
use crate::checkout::StrategyError;
use crate::counter_reader::CounterReader;
use crate::live::Live;
use crate::threads::LoadThreads;
use poolbench_model::{
    plan_hash, CellResult, CellSpec, LoadModel, Machine, PipelineProbe, Plan, PlanError, RunResult,
    ServerCounters, ShardStamp, SkippedCell, SloStop, StartSlots, SCHEMA_VERSION,
};
use poolbench_pool::Connector;
use poolbench_targets::{AnyTarget, Target, TargetError};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;

/// Why a run could not start or go on.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Strategy(#[from] StrategyError),
    #[error("cannot prepare {target}: {reason}")]
    Prepare { target: String, reason: String },
    #[error("cannot reach {target}: {reason}")]
    Unreachable { target: String, reason: String },
    #[error("cannot start the load runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Where the engine reports progress. Called from the engine's thread.
pub trait Events {
    fn cell_started(&self, _index: usize, _total: usize, _cell: &CellSpec) {}
    fn cell_finished(&self, _index: usize, _total: usize, _result: &CellResult) {}
    /// `--stop-on-slo` left the cell at `index` out.
    fn cell_skipped(&self, _index: usize, _total: usize, _skipped: &SkippedCell) {}
    /// A live view to keep up to date while the cells run (none: nothing
    /// is counted for one).
    fn live(&self) -> Option<&Live> {
        None
    }
}

/// Progress nobody watches.
pub struct NoEvents;
impl Events for NoEvents {}

/// Least time the first connect is given before the target counts as
/// down (more when `--connect-timeout` gives more: a login through a slow
/// proxy on a busy machine took 3.5 s).
const PREFLIGHT: Duration = Duration::from_millis(1500);

/// Run every cell of `plan` and return what was measured.
pub fn run(
    plan: &Plan,
    counters: Option<&dyn CounterReader>,
    events: &dyn Events,
) -> Result<RunResult, EngineError> {
    let whole = plan;
    plan.validate()?;
    let (cells, exec, stamp) = share_of(plan)?;
    let slots = StartSlots::of(plan);
    let plan = &exec;
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let ready = prepare(plan)?;
    let mut results = Vec::with_capacity(cells.len());
    let mut stop = SloStop::of(plan);
    let mut skipped = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        if let Some(s) = stop.as_ref().and_then(|stop| stop.skip(cell)) {
            events.cell_skipped(i, cells.len(), &s);
            skipped.push(s);
            continue;
        }
        events.cell_started(i, cells.len(), cell);
        let live = events.live();
        if let Some(live) = live {
            live.cell_started(cell, plan.shard.map(|s| s.index));
        }
        let runs = ready.runs_of(*cell, plan, counters, slots, i * plan.reps, live)?;
        if let Some(live) = live {
            live.cell_finished();
        }
        let result = cell_result(*cell, plan, runs);
        if let Some(stop) = &mut stop {
            stop.record(cell, &result);
        }
        events.cell_finished(i, cells.len(), &result);
        results.push(result);
    }
    let pipeline = ready.pipeline;
    drop(ready.load_threads);
    drop(ready.runtime);
    let mut result = run_result(whole, plan, started_at, results, pipeline, stamp);
    result.skipped = skipped;
    Ok(result)
}

/// The cells this process runs (a shard's share), the plan it runs them under, its stamp.
fn share_of(plan: &Plan) -> Result<(Vec<CellSpec>, Plan, Option<ShardStamp>), PlanError> {
    Ok(match plan.shard {
        Some(shard) => {
            let (cells, notes) = shard.split(plan).map_err(PlanError::from)?;
            let stamp = ShardStamp {
                index: shard.index,
                count: shard.count,
                plan_hash: plan_hash(plan),
                notes,
            };
            (cells, shard.plan(plan), Some(stamp))
        }
        None => (plan.cells(), plan.clone(), None),
    })
}

/// The run's result: the `cells` measured under `plan`, part of `whole`.
fn run_result(
    whole: &Plan,
    plan: &Plan,
    started_at: String,
    cells: Vec<CellResult>,
    pipeline: Option<PipelineProbe>,
    stamp: Option<ShardStamp>,
) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        target: plan.target.redacted(),
        machine: Machine::current(),
        config: whole.redacted(),
        server: None,
        started_at,
        interrupted: crate::interrupt::requested().map(signal_name),
        cells,
        skipped: Vec::new(),
        findings: Vec::new(),
        recommendation: None,
        reason: None,
        scaling: Vec::new(),
        pipeline,
        shard: stamp,
        merged_shards: None,
        generator_threads: None,
    }
}

/// A target opened and reached, on the engine's runtime.
struct Ready {
    runtime: tokio::runtime::Runtime,
    target: AnyTarget,
    load_threads: Option<LoadThreads>,
    pipeline: Option<PipelineProbe>,
}

/// The runtime started, the target opened, prepared and reached once
/// (so a target that is down stops the run before any load), and the
/// pipelining probe run when asked.
fn prepare(plan: &Plan) -> Result<Ready, EngineError> {
    let addr = poolbench_targets::resolve(&plan.target)?;
    // The open loop sends from load threads of its own (below): this
    // runtime then only watches the cell.
    let open = matches!(plan.load, LoadModel::Open { .. });
    let workers = match open {
        true => 1,
        false => plan.threads,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(crate::cpu::LOAD_THREAD)
        .enable_all()
        .build()?;
    let target = AnyTarget::open(
        &plan.target,
        addr,
        &plan.target_options,
        plan.connect_timeout,
    )?;
    let unreachable = |reason: String| EngineError::Unreachable {
        target: plan.target.redacted(),
        reason,
    };
    runtime
        .block_on(target.prepare())
        .map_err(|e| EngineError::Prepare {
            target: plan.target.redacted(),
            reason: e.message,
        })?;
    if plan.preflight {
        let limit = PREFLIGHT.max(plan.connect_timeout);
        runtime
            .block_on(preflight(&target, limit))
            .map_err(unreachable)?;
    }
    let pipeline = match plan.pipeline {
        Some(depth) => Some(
            runtime
                .block_on(poolbench_targets::pipeline::probe(
                    &poolbench_targets::Sources::of_options(&plan.target_options, addr)
                        .map_err(unreachable)?,
                    addr,
                    (&plan.target.authority, &plan.target.path),
                    depth,
                    false,
                    Duration::from_secs(10),
                ))
                .map_err(|reason| unreachable(format!("pipelining probe failed: {reason}")))?,
        ),
        None => None,
    };
    // The open loop's senders, and closed-loop workers on exclusive leases
    // of connections their holder drives, get load threads with an I/O
    // driver each; everything else runs on the multi-thread runtime.
    let closed_apart = target.follows_holder() && matches!(plan.load, LoadModel::Closed);
    let load_threads = match open || closed_apart {
        true => Some(LoadThreads::start(plan.threads)?),
        false => None,
    };
    Ok(Ready {
        runtime,
        target,
        load_threads,
        pipeline,
    })
}

/// The first connect, within `limit`, and one request on it. The
/// connection is the exclusive kind (a PostgreSQL session checks the query
/// as the unnamed statement, which a transaction-pooling proxy allows).
async fn preflight(target: &AnyTarget, limit: Duration) -> Result<(), String> {
    match tokio::time::timeout(limit, target.connect_exclusive()).await {
        Ok(Ok(mut conn)) => {
            // One request, so the server has surely accepted this
            // connection before the first cell resets its counters.
            let _ = tokio::time::timeout(limit, target.send(&mut conn)).await;
            Ok(())
        }
        Ok(Err(e)) => Err(e.message),
        Err(_) => Err(format!("connect timed out after {limit:?}")),
    }
}

impl Ready {
    /// The runs of `cell`, one per rep (after the first, a stop ends them; a failure, the run).
    fn runs_of(
        &self,
        cell: CellSpec,
        plan: &Plan,
        counters: Option<&dyn CounterReader>,
        slots: Option<StartSlots>,
        first: usize,
        live: Option<&Live>,
    ) -> Result<Vec<(CellOutcome, Option<ServerCounters>)>, EngineError> {
        let mut runs = Vec::with_capacity(plan.reps);
        for rep in 0..plan.reps {
            if crate::interrupt::requested().is_some() && !runs.is_empty() {
                break;
            }
            let slot = slots.map(|s| s.at(first + rep));
            let run = self.run_once(cell, plan, counters, slot, live);
            if let (Err(_), Some(live)) = (&run, live) {
                live.run_abandoned();
                live.cell_finished();
            }
            runs.push(run?);
        }
        Ok(runs)
    }

    /// One run of `cell`, with the server's counters over it where read.
    fn run_once(
        &self,
        cell: CellSpec,
        plan: &Plan,
        counters: Option<&dyn CounterReader>,
        slot: Option<SystemTime>,
        live: Option<&Live>,
    ) -> Result<(CellOutcome, Option<ServerCounters>), EngineError> {
        if let Some(p) = counters {
            settle(p);
            p.reset();
        }
        let threads = self.load_threads.as_ref().filter(|_| {
            matches!(plan.load, LoadModel::Open { .. }) || !cell.strategy.shares_connections()
        });
        let tls_before = self.target.tls_facts();
        let mut outcome = self.runtime.block_on(run_cell(
            self.target.clone(),
            cell,
            plan,
            threads,
            slot,
            live,
        ))?;
        outcome.tls = match (self.target.tls_facts(), tls_before) {
            (Some(after), Some(before)) => Some(after.since(&before)),
            _ => None,
        };
        let server = counters.map(|p| {
            settle(p);
            p.read()
        });
        Ok((outcome, server))
    }
}

fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Wait (briefly) until the server has seen the last cell's connections close.
fn settle(counters: &dyn CounterReader) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while counters.read().connections_open > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}
