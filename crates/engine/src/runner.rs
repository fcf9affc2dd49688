//! The grid: every cell in turn on the engine's own runtime.
use crate::cell::{run_cell, CellOutcome};
use crate::machine::Machine;
use crate::plan::{CellSpec, Plan, PlanError};
use crate::probe::{ServerCounters, ServerProbe};
use crate::record::Summary;
use crate::result::{CellResult, Connections, Errors, Histograms, RunResult, SCHEMA_VERSION};
use poolbench_pool::{BuildError, Connector};
use poolbench_targets::http1::Http1Target;
use poolbench_targets::{ErrorKind, Target, TargetError};
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
    plan.validate()?;
    let addr = plan.target.resolve()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.threads)
        .thread_name("poolbench-load")
        .enable_all()
        .build()?;
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let target = Http1Target::new(&plan.target, addr, plan.connect_timeout);
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
            target: plan.target.url.clone(),
            reason,
        })?;

    let cells = plan.cells();
    let mut results = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        events.cell_started(i, cells.len(), cell);
        if let Some(p) = probe {
            settle(p);
            p.reset();
        }
        let outcome = runtime.block_on(run_cell(target.clone(), *cell, plan))?;
        let server = probe.map(|p| {
            settle(p);
            p.read()
        });
        let result = cell_result(*cell, outcome, server);
        events.cell_finished(i, cells.len(), &result);
        results.push(result);
    }
    drop(runtime);
    Ok(RunResult {
        schema_version: SCHEMA_VERSION,
        target: plan.target.url.clone(),
        machine: Machine::current(),
        config: plan.clone(),
        server: None,
        started_at,
        cells: results,
    })
}

/// Wait (briefly) until the server has seen the last cell's connections close.
fn settle(probe: &dyn ServerProbe) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while probe.read().connections_open > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn cell_result(cell: CellSpec, o: CellOutcome, server: Option<ServerCounters>) -> CellResult {
    let r = &o.recorder;
    let mut errors = Errors::default();
    for kind in ErrorKind::ALL {
        let n = r.errors[kind as usize];
        errors.total += n;
        if n > 0 {
            errors.by_kind.insert(kind.name().to_string(), n);
        }
    }
    let secs = o.measured.as_secs_f64();
    let completed = r.ok + errors.total;
    let m = &o.metrics;
    CellResult {
        strategy: cell.strategy.to_string(),
        concurrency: cell.concurrency,
        pool_size: cell.strategy.size(),
        duration_s: secs,
        requests: completed,
        ok: r.ok,
        warmup_requests: r.warmup,
        after_end: r.outside,
        unfinished: o.unfinished,
        errors,
        throughput_rps: if secs > 0.0 { r.ok as f64 / secs } else { 0.0 },
        latency_us: Summary::of(&r.latency),
        checkout_wait_us: Summary::of(&r.checkout),
        request_us: Summary::of(&r.request),
        connections: Connections {
            opened: m.opened,
            closed: m.closed(),
            peak_open: m.peak_open,
            idle_at_end: o.idle_at_end,
            requests_per_connection: if m.opened > 0 {
                (completed + r.warmup + r.outside) as f64 / m.opened as f64
            } else {
                0.0
            },
        },
        pool: o.metrics.clone(),
        server,
        histograms: Histograms::of(&r.latency, &r.checkout, &r.request),
    }
}
