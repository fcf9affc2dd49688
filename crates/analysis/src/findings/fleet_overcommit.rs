//! `fleet-overcommit`: replicas × pool over what the fleet may hold —
//! the service's healthy in-flight level or the server's own connection
//! limit (`tune --replicas`). A run has no replicas: `tune`'s conclusion
//! finds it (`tune/fleet.rs`), with the pool per replica that fits.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::Fleet;

pub(crate) const CHECK: Check = Check {
    id: Id::FleetOvercommit,
    title: "replicas × pool exceed what the server or the service can take",
    find,
};

/// A run is one process: nothing to find.
fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether `replicas` pools of `pool` exceed `budget`.
pub fn overcommits(replicas: u32, pool: u64, budget: u64) -> bool {
    u64::from(replicas) * pool > budget
}

/// The evidence for `fleet`, given the single-process pick: one line per
/// way the worst-case fleet exceeds its budget.
pub fn evidence(fleet: &Fleet, pick: Option<u64>) -> Vec<String> {
    let Some(budget) = fleet.budget else {
        return Vec::new();
    };
    let worst = fleet.replicas.worst_case();
    let mut lines = Vec::new();
    let fits = fleet.pool_per_replica.unwrap_or(1);
    if let Some(p) = pick.filter(|&p| overcommits(worst, p, budget)) {
        lines.push(format!(
            "the single-process pick, {p} connections, in each of {worst} replicas{} is {} connections, over the budget of {budget} ({}): set {fits} per replica ({} in all)",
            surge_words(fleet),
            u64::from(worst) * p,
            fleet.budget_source,
            u64::from(worst) * fits
        ));
    }
    if overcommits(worst, fits, budget) {
        lines.push(format!(
            "even {fits} connection per replica: {worst} replicas hold {}, over the budget of {budget}: at most {budget} replicas fit, or raise the limit",
            u64::from(worst) * fits
        ));
    }
    lines
}

fn surge_words(fleet: &Fleet) -> String {
    let r = fleet.replicas;
    match r.worst_case() > r.max {
        true => format!(" ({} and a {}% surge)", r.max, r.surge_pct),
        false => String::new(),
    }
}
