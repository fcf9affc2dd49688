//! The pool per replica (`tune --replicas`): the connections the whole
//! fleet may hold (the service's healthy in-flight level, the server's
//! own limit, whichever is lower) divided by the most replicas that run
//! at once (a rolling update's surge included), never above the
//! single-process pick's share at the fewest replicas (the client's load
//! `-c` is the whole fleet's: each of N replicas carries 1/N of it).
//! Pure functions of the capacity and the limit.
use poolbench_analysis::findings::fleet_overcommit;
use poolbench_analysis::CHECKS;
use poolbench_model::findings::Id;
use poolbench_model::{Capacity, Finding, Fleet, FleetRow, Replicas, ServerLimit, TuneResult};

/// Most rows a fleet table shows (the surge's row besides).
const MOST_ROWS: usize = 6;

/// The fleet's connection limit and where it came from: the least of the
/// service's knee (below its cliff) and the server's connections left.
pub fn connection_limit(
    capacity: &Capacity,
    limit: Option<&ServerLimit>,
    pick: Option<u64>,
) -> (Option<u64>, String) {
    let service = match (service_limit(capacity), pick) {
        // The pick was measured healthy at the client's load, below any
        // cliff: where it is above the knee, the knee undersells it.
        (Some((k, why)), Some(p)) if p > k && capacity.cliff_in_flight.is_none_or(|c| p < c as u64) => {
            Some((p, format!("the single-process pick: {p} connections carried the client's load within bounds ({why})")))
        }
        (s, _) => s,
    };
    let server = limit.and_then(|l| l.connections.map(|n| (n, l.source.clone())));
    match (service, server) {
        (Some((s, why_s)), Some((n, why_n))) if n < s => (Some(n), format!("{why_n}; {why_s}")),
        (Some((s, why_s)), Some((_, why_n))) => (Some(s), format!("{why_s}; {why_n}")),
        (Some((s, why)), None) | (None, Some((s, why))) => (Some(s), why),
        (None, None) => (
            None,
            "neither the service's knee nor the server's limit is known".into(),
        ),
    }
}

/// The service's own bound: how many it serves at once (Little's law)
/// where that is above its knee, else its knee; below its cliff. On a
/// sharp curve (a service that takes 24 at once) the knee, where the curve
/// reaches 95% of its peak, reads 22 or 23, and four replicas of 5 would
/// leave a sixth of the service idle.
fn service_limit(c: &Capacity) -> Option<(u64, String)> {
    let below_cliff = c.cliff_in_flight.map(|x| x.saturating_sub(1).max(1) as u64);
    let knee = c.knee_in_flight.map(|k| k as u64);
    let serves = c.serves_at_once.map(|n| n as u64);
    match (knee, below_cliff) {
        (Some(k), Some(b)) if b < k => {
            Some((b, format!("the service fails from {} in flight", b + 1)))
        }
        (Some(k), b) if serves.is_some_and(|n| n > k && b.is_none_or(|b| n <= b)) => {
            let n = serves.unwrap_or(k);
            Some((
                n,
                format!("the service serves about {n} at a time (its knee: {k} in flight reach 95% of its peak)"),
            ))
        }
        (Some(k), _) => Some((
            k,
            format!("the service's knee: {k} in flight reach 95% of its peak"),
        )),
        (None, Some(b)) => Some((b, format!("the service fails from {} in flight", b + 1))),
        (None, None) => None,
    }
}

/// The pool each of `replicas` may have within `limit`, never above
/// `pick` and at least 1; `pick` alone without a limit.
pub fn per_replica(limit: Option<u64>, replicas: u32, pick: Option<u64>) -> Option<u64> {
    let share = limit.map(|b| (b / u64::from(replicas.max(1))).max(1));
    match (share, pick) {
        (Some(s), Some(p)) => Some(s.min(p)),
        (s, p) => s.or(p),
    }
}

/// The replica counts a table shows: MIN … MAX (at most six, evenly
/// spaced), then the surge's worst case.
pub fn row_counts(r: Replicas) -> Vec<u32> {
    let (lo, hi) = (r.min.min(r.max), r.max.max(r.min));
    let span = hi - lo;
    let steps = (span as usize).min(MOST_ROWS - 1);
    let mut counts: Vec<u32> = (0..=steps)
        .map(|i| match steps {
            0 => lo,
            _ => lo + (span as u64 * i as u64 / steps as u64) as u32,
        })
        .collect();
    counts.dedup();
    let worst = r.worst_case();
    if worst > hi {
        counts.push(worst);
    }
    counts
}

/// The fleet for `replicas`: its connection limit, pool per replica, a
/// row per count.
pub fn plan(
    replicas: Replicas,
    limit: Option<ServerLimit>,
    capacity: &Capacity,
    pick: Option<u64>,
) -> Fleet {
    let (most, most_source) = connection_limit(capacity, limit.as_ref(), pick);
    let worst = replicas.worst_case();
    // What one replica needs at most: the pick's share at the fewest.
    let pick = pick.map(|p| p.div_ceil(u64::from(replicas.min.max(1))));
    let pool = per_replica(most, worst, pick);
    let rows = row_counts(replicas)
        .into_iter()
        .map(|n| {
            let total = pool.map(|p| p * u64::from(n));
            FleetRow {
                replicas: n,
                surge: n > replicas.max,
                fits_per_replica: per_replica(most, n, pick),
                total,
                within_limit: match (total, most) {
                    (Some(t), Some(b)) => t <= b,
                    _ => true,
                },
            }
        })
        .collect();
    Fleet {
        replicas,
        server_limit: limit,
        connection_limit: most,
        connection_limit_source: most_source,
        pool_per_replica: pool,
        rows,
    }
}

/// Read the fleet of `result` again from its capacity and pick, and its
/// `fleet-overcommit` finding.
pub fn conclude(result: &mut TuneResult) {
    let Some(old) = result.fleet.take() else {
        return;
    };
    let pick = result.recommendation.as_ref().map(|r| r.pool_size as u64);
    let fleet = plan(old.replicas, old.server_limit, &result.capacity, pick);
    result.findings.retain(|f| f.id != Id::FleetOvercommit);
    let evidence = fleet_overcommit::evidence(&fleet, pick);
    if !evidence.is_empty() {
        let title = CHECKS
            .iter()
            .find(|c| c.id == Id::FleetOvercommit)
            .map_or("", |c| c.title);
        result.findings.push(Finding {
            id: Id::FleetOvercommit,
            title: title.to_string(),
            cells: Vec::new(),
            evidence,
        });
        result
            .findings
            .sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    }
    result.fleet = Some(fleet);
}
