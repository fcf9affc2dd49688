//! `tune --replicas N`: the pool per replica run as N client processes at
//! once (`poolbench replica`, each a shard of one plan, started together),
//! merged exactly, in paired rounds against the one process with the
//! single-process pick; what the runs measured, for the analysis to judge.
use poolbench_model::{FleetCheck, FleetRound, Plan, RunResult, Shard, StrategySpec};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

/// Most client processes run at once on this machine.
pub(crate) const MOST_REPLICAS: usize = 8;
/// Paired rounds: one, fleet, fleet, one.
const ROUNDS: usize = 2;
/// Time the processes get to start before the load begins together.
const START_LEAD: Duration = Duration::from_millis(1500);

/// What a fleet run needs: the points' plan (target, request, timeouts),
/// the client's load, both strategies.
pub(crate) struct FleetPlan<'a> {
    pub(crate) base: &'a Plan,
    pub(crate) workers: usize,
    /// The strategy family (`pool`, `round-robin` …).
    pub(crate) family: &'a str,
    /// The single-process pick's size, and each replica's.
    pub(crate) single: usize,
    pub(crate) per_replica: usize,
    pub(crate) replicas: usize,
    pub(crate) duration: Duration,
}

/// Run the paired rounds; `Err` when a process could not run at all.
pub(crate) fn check(p: &FleetPlan, dir: &Path) -> Result<FleetCheck, String> {
    let replicas = p.replicas.clamp(1, MOST_REPLICAS);
    let spec = |n: usize| -> Result<StrategySpec, String> {
        format!("{}:{n}", p.family)
            .parse()
            .map_err(|e: poolbench_model::SpecError| e.to_string())
    };
    // The whole fleet's plan: each of its shards runs one replica's pool.
    let whole = spec(p.per_replica * replicas)?;
    let single = spec(p.single)?;
    let mut check = FleetCheck {
        replicas,
        replica_strategy: spec(p.per_replica)?.to_string(),
        single_strategy: single.to_string(),
        workers: p.workers,
        ..FleetCheck::default()
    };
    if replicas < p.replicas {
        check.note = Some(format!(
            "{} replicas asked; {replicas} processes run here (at most {MOST_REPLICAS} on one machine)",
            p.replicas
        ));
    }
    for r in 0..ROUNDS {
        let fleet_first = r % 2 == 1;
        let mut round = FleetRound::default();
        for fleet in [fleet_first, !fleet_first] {
            let (strategy, n) = match fleet {
                true => (&whole, replicas),
                false => (&single, 1),
            };
            let merged = run_processes(p, strategy, n, dir)?;
            let cell = merged.cells.first().ok_or("a process ran no cell")?;
            let (rps, p99, errors) = (cell.throughput_rps, cell.latency_us.p99, cell.errors.total);
            match fleet {
                true => {
                    (round.fleet_rps, round.fleet_p99_us, round.fleet_errors) = (rps, p99, errors)
                }
                false => {
                    (round.single_rps, round.single_p99_us, round.single_errors) =
                        (rps, p99, errors)
                }
            }
        }
        check.rounds.push(round);
    }
    check.conclude();
    Ok(check)
}

/// `n` processes of `strategy` (the whole fleet's: each runs its shard) at
/// once, their results merged.
fn run_processes(
    p: &FleetPlan,
    strategy: &StrategySpec,
    n: usize,
    dir: &Path,
) -> Result<RunResult, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find poolbench itself: {e}"))?;
    let mut plan = p.base.clone();
    plan.strategies = vec![*strategy];
    plan.concurrency = vec![p.workers];
    plan.duration = p.duration;
    plan.reps = 1;
    if n > 1 {
        let at = SystemTime::now() + START_LEAD;
        plan.start_at = Some(humantime::format_rfc3339_millis(at).to_string());
    }
    let mut children = Vec::new();
    for i in 0..n {
        let mut mine = plan.clone();
        if n > 1 {
            mine.shard = Some(Shard { index: i, count: n });
        }
        let file = dir.join(format!("replica-{i}.json"));
        std::fs::write(&file, serde_json::to_vec(&mine).expect("a plan serializes"))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let child = Command::new(&exe)
            .arg("replica")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a replica process: {e}"))?;
        children.push(child);
    }
    // Every child is waited for, whatever the others did.
    let outputs: Vec<_> = children.into_iter().map(|c| c.wait_with_output()).collect();
    let mut parts = Vec::new();
    for out in outputs {
        let out = out.map_err(|e| format!("a replica process: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "a replica process failed: {}",
                err.lines().last().unwrap_or("no message")
            ));
        }
        let r: RunResult =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("a replica's result: {e}"))?;
        parts.push(r);
    }
    match parts.len() {
        1 => Ok(parts.remove(0)),
        _ => poolbench_analysis::merge(&parts),
    }
}
