//! The grid: every cell in turn on the engine's own runtime.
use crate::assemble::cell_result;
use crate::cell::run_cell;
use crate::findings;
use crate::load::LoadModel;
use crate::machine::Machine;
use crate::plan::{CellSpec, Plan, PlanError};
use crate::probe::ServerProbe;
use crate::result::{CellResult, RunResult, SCHEMA_VERSION};
use crate::shard::Schedule;
use crate::threads::LoadThreads;
use poolbench_pool::{BuildError, Connector};
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
    Strategy(#[from] BuildError),
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
}

/// Progress nobody watches.
pub struct NoEvents;
impl Events for NoEvents {}

/// Longest the first connect may take before the target counts as down.
const PREFLIGHT: Duration = Duration::from_millis(1500);

/// Run every cell of `plan` and return what was measured.
pub fn run(
    plan: &Plan,
    probe: Option<&dyn ServerProbe>,
    events: &dyn Events,
) -> Result<RunResult, EngineError> {
    let whole = plan;
    plan.validate()?;
    // A shard runs its share of every cell of the whole plan.
    let (cells, exec, stamp) = match plan.shard {
        Some(shard) => {
            let (cells, notes) = shard.split(plan).map_err(PlanError::from)?;
            let stamp = crate::shard::ShardStamp {
                index: shard.index,
                count: shard.count,
                plan_hash: crate::shard::plan_hash(plan),
                notes,
            };
            (cells, shard.plan(plan), Some(stamp))
        }
        None => (plan.cells(), plan.clone(), None),
    };
    let schedule = Schedule::of(plan);
    let plan = &exec;
    let addr = plan.target.resolve()?;
    // The open loop's pacing thread counts as one of the threads: its
    // requests run on the others (at least one). On 2 cores, a second
    // worker competing with the pacer doubled the send lag's p99 and made
    // the corrected p99 swing 6x between reruns (bench/RESULTS.md).
    let workers = match plan.load {
        LoadModel::Open { .. } => plan.threads.saturating_sub(1).max(1),
        _ => plan.threads,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(crate::cpu::LOAD_THREAD)
        .enable_all()
        .build()?;
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let target = AnyTarget::open(
        &plan.target,
        addr,
        &plan.target_options,
        plan.connect_timeout,
    )?;
    runtime
        .block_on(target.prepare())
        .map_err(|e| EngineError::Prepare {
            target: plan.target.redacted(),
            reason: e.message,
        })?;
    runtime
        .block_on(async {
            match tokio::time::timeout(PREFLIGHT, target.connect()).await {
                Ok(Ok(mut conn)) => {
                    // One request, so the server has surely accepted this
                    // connection before the first cell resets its counters.
                    let _ = tokio::time::timeout(PREFLIGHT, target.send(&mut conn)).await;
                    Ok(())
                }
                Ok(Err(e)) => Err(e.message),
                Err(_) => Err(format!("connect timed out after {PREFLIGHT:?}")),
            }
        })
        .map_err(|reason| EngineError::Unreachable {
            target: plan.target.redacted(),
            reason,
        })?;

    let pipeline = match plan.pipeline {
        Some(depth) => Some(
            runtime
                .block_on(poolbench_targets::pipeline::probe(
                    addr,
                    &plan.target.authority,
                    &plan.target.path,
                    depth,
                    Duration::from_secs(10),
                ))
                .map_err(|reason| EngineError::Unreachable {
                    target: plan.target.redacted(),
                    reason: format!("pipelining probe failed: {reason}"),
                })?,
        ),
        None => None,
    };

    // Closed-loop workers on exclusive leases of connections their holder
    // drives get load threads with an I/O driver each; everything else
    // runs on the multi-thread runtime.
    let load_threads = match target.follows_holder() && matches!(plan.load, LoadModel::Closed) {
        true => Some(LoadThreads::start(plan.threads)?),
        false => None,
    };
    let slot_at = |k: usize| schedule.map(|s| s.at(k));
    let mut results = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        events.cell_started(i, cells.len(), cell);
        let mut runs = Vec::with_capacity(plan.reps);
        for rep in 0..plan.reps {
            if crate::interrupt::requested().is_some() && !runs.is_empty() {
                break;
            }
            if let Some(p) = probe {
                settle(p);
                p.reset();
            }
            let threads = load_threads
                .as_ref()
                .filter(|_| !cell.strategy.shares_connections());
            let slot = slot_at(i * plan.reps + rep);
            let outcome = runtime.block_on(run_cell(target.clone(), *cell, plan, threads, slot))?;
            let server = probe.map(|p| {
                settle(p);
                p.read()
            });
            runs.push((outcome, server));
        }
        let result = cell_result(*cell, plan, runs);
        events.cell_finished(i, cells.len(), &result);
        results.push(result);
    }
    drop(load_threads);
    drop(runtime);
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        target: plan.target.redacted(),
        machine: Machine::current(),
        config: whole.redacted(),
        server: None,
        started_at,
        interrupted: crate::interrupt::requested().map(signal_name),
        cells: results,
        pitfalls: Vec::new(),
        recommendation: None,
        no_recommendation: None,
        scaling: Vec::new(),
        pipeline,
        shard: stamp,
        merged_shards: None,
    };
    if let Some(slo) = &plan.slo {
        for c in &mut result.cells {
            c.slo_breaches = Some(slo.breaches(c));
        }
    }
    if matches!(plan.load, LoadModel::Closed) {
        result.scaling = findings::usl_fits(&result);
    }
    result.pitfalls = findings::pitfalls(&result);
    match findings::recommend(&result) {
        Ok(r) => result.recommendation = Some(r),
        Err(why) => result.no_recommendation = Some(why),
    }
    Ok(result)
}

fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Wait (briefly) until the server has seen the last cell's connections close.
fn settle(probe: &dyn ServerProbe) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while probe.read().connections_open > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}
