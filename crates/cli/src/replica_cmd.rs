//! `poolbench replica PLAN.json` (hidden): run a plan written by `tune`
//! (its shard, at its start time) and print the result as JSON. `tune
//! --replicas N` starts N of these at once to prove its division.
use crate::Failure;
use poolbench_model::Plan;
use std::path::Path;

pub(crate) fn replica(path: &Path) -> Result<(), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let plan: Plan = serde_json::from_str(&text)
        .map_err(|e| Failure::input(format!("{}: not a plan: {e}", path.display())))?;
    plan.validate().map_err(Failure::input)?;
    crate::limits::raise();
    let progress = crate::progress::Progress::new(plan.cells().len(), true, None);
    let mut result = poolbench_engine::run(&plan, None, &progress).map_err(Failure::runtime)?;
    poolbench_analysis::analyze(&mut result);
    println!(
        "{}",
        serde_json::to_string(&result).expect("a result serializes")
    );
    Ok(())
}
