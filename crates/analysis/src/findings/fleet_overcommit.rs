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

/// Whether `replicas` pools of `pool` exceed `limit`, the fleet's
/// connection limit.
pub fn overcommits(replicas: u32, pool: u64, limit: u64) -> bool {
    u64::from(replicas) * pool > limit
}

/// The evidence for `fleet`, given the single-process pick: one line per
/// way the worst-case fleet exceeds its connection limit.
pub fn evidence(fleet: &Fleet, pick: Option<u64>) -> Vec<String> {
    let Some(limit) = fleet.connection_limit else {
        return Vec::new();
    };
    let worst = fleet.replicas.worst_case();
    let mut lines = Vec::new();
    let fits = fleet.pool_per_replica.unwrap_or(1);
    if let Some(p) = pick.filter(|&p| overcommits(worst, p, limit)) {
        lines.push(format!(
            "the single-process pick, {p} connections, in each of {worst} replicas{} is {} connections, over the fleet's connection limit of {limit} ({}): set {fits} per replica ({} in all)",
            surge_words(fleet),
            u64::from(worst) * p,
            fleet.connection_limit_source,
            u64::from(worst) * fits
        ));
    }
    if overcommits(worst, fits, limit) {
        lines.push(format!(
            "even {fits} connection per replica: {worst} replicas hold {}, over the fleet's connection limit of {limit}: at most {limit} replicas fit, or raise the limit",
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
