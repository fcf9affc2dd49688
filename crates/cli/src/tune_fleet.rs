//! `tune --replicas N`, after the answer: the division proved by running
//! it (fleet_run.rs), its verdict kept in the result.
use crate::fleet_run::{FleetPlan, MOST_REPLICAS};
use poolbench_model::{FleetCheck, Plan, TuneLoad, TuneResult};
use std::time::Duration;

/// Each run of the proof: measured seconds, after the plan's warm-up.
const RUN: Duration = Duration::from_secs(2);

/// With `--replicas`: the proof of the pick's division, at the most
/// replicas of the range (without the surge: the steady fleet).
pub(crate) fn after(result: &TuneResult, base: &Plan, quiet: bool) -> Option<FleetCheck> {
    let fleet = result.fleet.as_ref()?;
    let per_replica = fleet.pool_per_replica? as usize;
    prove(
        result,
        base,
        fleet.replicas.max as usize,
        per_replica,
        quiet,
    )
}

/// Run the pick's per-replica pool as `replicas` processes against one
/// process with the whole pick; `None` when there is nothing to prove (no
/// pick, one replica, an open loop).
pub(crate) fn prove(
    result: &TuneResult,
    base: &Plan,
    replicas: usize,
    per_replica: usize,
    quiet: bool,
) -> Option<FleetCheck> {
    let pick = result.recommendation.as_ref()?;
    let TuneLoad::Concurrency(c) = result.load else {
        return None;
    };
    if replicas < 2 {
        return None;
    }
    let n = replicas.min(MOST_REPLICAS);
    if !quiet {
        eprintln!(
            "proving the division: {n} processes of {}:{per_replica} against one of {}, paired",
            pick.strategy, pick.spec
        );
    }
    let dir = std::env::temp_dir().join(format!("poolbench-fleet-{}", std::process::id()));
    let plan = FleetPlan {
        base,
        workers: c,
        family: &pick.strategy,
        single: pick.pool_size,
        per_replica: per_replica.max(1),
        replicas,
        duration: RUN,
    };
    let checked = std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .and_then(|()| crate::fleet_run::check(&plan, &dir));
    let _ = std::fs::remove_dir_all(&dir);
    Some(checked.unwrap_or_else(|why| FleetCheck {
        replicas: n,
        replica_strategy: format!("{}:{per_replica}", pick.strategy),
        single_strategy: pick.spec.clone(),
        workers: c,
        note: Some(format!("the fleet could not be run: {why}")),
        ..FleetCheck::default()
    }))
}
