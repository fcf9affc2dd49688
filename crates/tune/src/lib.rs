//! `poolbench tune`: the search for a service's capacity and a client's
//! pool size, and what its points mean.
//!
//! - **The loop** ([`Searcher`], `searcher/`): phase 1 raises then bisects
//!   the requests in flight on one connection each (the capacity curve),
//!   phase 2 searches each strategy family's pool size at the client's
//!   load by paired comparisons, then the pick is confirmed. Every failure
//!   is waited out before the search goes on. It sees the world only
//!   through a [`Measure`] (one point run; the probes before any load:
//!   the server's own limit, pipelining, the idle close) and a [`Clock`],
//!   so the budget is charged in one place and the whole loop runs on
//!   simulated services in milliseconds (`tests/tune_loop.rs`). The
//!   binary implements `Measure` with the engine.
//! - **The decisions** are pure functions of the points: the next level
//!   (`search.rs`), the next pool size (`pool_search.rs`), a point and
//!   its failure ([`point_of`], [`Failure`]), the fitted curve and its
//!   knee ([`fit_curve`], [`knee_of`]).
//! - **The answer**: [`conclude`] reads the points again, as
//!   `poolbench_analysis::analyze` reads a run: the capacity (knee, cliff,
//!   serves at once), the inferences, the vetting of the pick, the fleet
//!   division ([`plan_fleet`]), the client libraries' settings
//!   ([`settings`]) and the acquire and idle timeouts ([`timeouts`]).
//!
//! - **The rate it holds** ([`rate`]): `--find-rate`, the highest
//!   open-loop rate within the SLO, each point judged sustained.
//!
//! Plain functions over `poolbench-model`'s `TuneResult`; the findings'
//! thresholds come from `poolbench-analysis`. No runtime, no I/O.
//!
//! How the crates meet: the map in `poolbench_model`'s documentation.
#![forbid(unsafe_code)]

mod adaptive;
mod capacity;
mod confirm;
mod failure;
mod fit;
mod fleet;
mod inferences;
mod near_line;
mod point;
mod pool_search;
mod probe;
pub mod rate;
mod search;
mod searcher;
mod settings;
mod timeouts;
mod verdict;
mod vet;

pub use capacity::{capacity, capacity_points, service_time_us, stall_threshold, KNEE_SHARE};
pub use confirm::{confirm_sizes, decide};
pub use failure::Failure;
pub use fit::{fit_curve, isotonic, knee_of};
pub use fleet::{per_replica, plan as plan_fleet, row_counts};
pub use inferences::inferences;
pub use point::{batch_rates, failure, point_of, relative_ci};
pub use pool_search::{
    confirmed_pick, disturbed, near_line, needs_round, next_pool, verdicts, PoolBounds, PoolStep,
    Verdict,
};
pub use poolbench_analysis::findings::fleet_overcommit::evidence as fleet_overcommit_evidence;
pub use probe::{pipeline_depth, IdleLook, Probes, IDLE_SHARE};
pub use search::{close_enough, next_level, CapacityLimits};
pub use searcher::{keep_threads, Ask, Clock, Measure, Ran, Searcher, Setup, WallClock};
pub use settings::{pipelined, settings, settings_with};
pub use timeouts::{acquire_ms, client_idle_s, timeouts, ACQUIRE_FLOOR_MS, ACQUIRE_HEADROOM};
pub use verdict::{close_to_best, meets, tie, WITHIN_BEST};
pub use vet::vet;

use poolbench_model::findings::Id;
use poolbench_model::StrategySpec;
use poolbench_model::{
    FamilyAnswer, Slo, TuneComparison, TunePhase, TunePoint, TuneRecommendation, TuneResult,
};

/// The family a point's strategy belongs to (`pool:24` → `pool`).
pub fn family_of(strategy: &str) -> &str {
    strategy.split(':').next().unwrap_or(strategy)
}

/// Whether the findings name a delayed ACK (the latency is not the
/// service's).
fn delayed_ack(result: &TuneResult) -> bool {
    result.findings.iter().any(|f| f.id == Id::DelayedAck)
}

/// Read the points of `result` again: capacity, each family's answer, the
/// recommendation (or why none) and the inferences. `scheme`: the
/// target's URL scheme, for the client settings.
pub fn conclude(result: &mut TuneResult, scheme: &str) {
    let slo = result.slo.clone();
    result.capacity = capacity(&result.points, slo.as_ref(), delayed_ack(result));
    let stall_s = stall_threshold(result.capacity.service_time_us);
    let mut answers = Vec::new();
    let mut winners: Vec<(&TunePoint, Vec<usize>)> = Vec::new();
    for family in &result.families {
        let answer = family_answer(
            (&result.points, &result.comparisons, &result.families_found),
            family,
            slo.as_ref(),
            stall_s,
        );
        answers.push(match &answer {
            Ok((p, _)) => FamilyAnswer {
                family: family.clone(),
                pool_size: Some(p.pool_size),
                throughput_rps: Some(p.throughput_rps),
                p99_us: Some(p.p99_us),
                reason: None,
            },
            Err(why) => FamilyAnswer {
                family: family.clone(),
                pool_size: None,
                throughput_rps: None,
                p99_us: None,
                reason: Some(why.clone()),
            },
        });
        if let Ok(w) = answer {
            winners.push(w);
        }
    }
    result.families_found = answers;
    result.inferences = inferences(&result.capacity, &result.points, &result.findings);
    result.adaptive = adaptive::adaptive(&result.capacity, &result.points);
    let best = winners
        .iter()
        .map(|(p, _)| p.throughput_rps)
        .max_by(f64::total_cmp);
    // Families within 5% of the best: the fewest connections win.
    let pick = winners
        .into_iter()
        .filter(|(p, _)| best.is_some_and(|b| p.throughput_rps >= WITHIN_BEST * b))
        .min_by_key(|(p, _)| p.pool_size);
    let vetted = pick.map(|(p, tied)| vet::vet(result, p).map(|slow| (p, tied, slow)));
    (result.recommendation, result.reason) = match vetted {
        Some(Ok((p, tied, slow))) => {
            result.inferences.extend(slow);
            let mut r = recommendation(p, tied, scheme);
            let t = timeouts(p, slo.as_ref(), result.server_idle.as_ref());
            r.client_settings = match r.spec.parse() {
                Ok(StrategySpec::Pipeline(Some(n), Some(d))) => settings::pipelined(n, d),
                _ => settings_with(scheme, &r.strategy, r.pool_size, &t),
            };
            r.timeouts = (t != Default::default()).then_some(t);
            r.cap = vet::cap_reason(result, p);
            let ceiling = vet::ceiling(result, p);
            result.inferences.extend(ceiling);
            let note = reference_note(result, p);
            result.inferences.extend(note);
            let family = family_of(&p.strategy);
            let failed = failed_sizes(&result.points, family, slo.as_ref(), stall_s);
            let near = near_line::note(&result.comparisons, p, family, &failed);
            result.inferences.extend(near);
            let unconfirmed = near_line::unconfirmed(&result.comparisons, p, family, &failed);
            result.inferences.extend(unconfirmed);
            (Some(r), None)
        }
        Some(Err(why)) => (None, Some(format!("no pool is recommended: {why}"))),
        None => (None, Some(no_pick_reason(result))),
    };
    fleet::conclude(result);
}

/// One family's answer: from its paired comparisons, or (results saved
/// before them) from its confirmation points alone.
fn family_answer<'a>(
    (points, comparisons, found): (&'a [TunePoint], &[TuneComparison], &[FamilyAnswer]),
    family: &str,
    slo: Option<&Slo>,
    stall_s: f64,
) -> Result<(&'a TunePoint, Vec<usize>), String> {
    let confirmed: Vec<&TunePoint> = points
        .iter()
        .filter(|p| p.phase == TunePhase::Confirm && family_of(&p.strategy) == family)
        .collect();
    let earlier = found.iter().find(|a| a.family == family);
    // The last reference of the family's search (a reference that broke
    // the bounds was replaced by a lower one).
    let reference = comparisons
        .iter()
        .rev()
        .find(|c| c.family == family)
        .map(|c| c.reference);
    let compared: Vec<&TuneComparison> = comparisons
        .iter()
        .filter(|c| c.family == family && Some(c.reference) == reference)
        .collect();
    match (confirmed.is_empty(), compared.is_empty()) {
        (true, _) => Err(earlier
            .and_then(|a| a.reason.clone())
            .unwrap_or_else(|| "the search did not reach its confirmation".into())),
        (false, true) => decide(&confirmed, slo, stall_s),
        (false, false) => paired_pick(points, &compared, family, slo, stall_s),
    }
}

/// A family's answer from its paired comparisons: the smallest size
/// confirmed within 5% of the reference, with its confirmation point.
fn paired_pick<'a>(
    points: &'a [TunePoint],
    compared: &[&TuneComparison],
    family: &str,
    slo: Option<&Slo>,
    stall_s: f64,
) -> Result<(&'a TunePoint, Vec<usize>), String> {
    let failed = failed_sizes(points, family, slo, stall_s);
    let reference = compared.last().map(|c| c.reference);
    let pick = pool_search::confirmed_pick(compared, &failed);
    let Some(pick) = pick.filter(|v| Some(v.pool_size) != reference) else {
        return reference_pick(points, compared, family, &failed);
    };
    let point = points
        .iter()
        .rev()
        .filter(|p| family_of(&p.strategy) == family)
        .find(|p| p.phase == TunePhase::Confirm && p.pool_size == pick.pool_size)
        .ok_or("the pick has no confirmation point")?;
    Ok((point, Vec::new()))
}

/// The sizes of a family whose pool-search or confirmation runs broke the
/// bounds.
pub(crate) fn failed_sizes(
    points: &[TunePoint],
    family: &str,
    slo: Option<&Slo>,
    stall_s: f64,
) -> Vec<usize> {
    points
        .iter()
        .filter(|p| family_of(&p.strategy) == family)
        .filter(|p| matches!(p.phase, TunePhase::Pool | TunePhase::Confirm))
        .filter(|p| meets(p, slo, stall_s).is_err())
        .map(|p| p.pool_size)
        .collect()
}

/// No smaller size was confirmed (the confirmation rejected them, or the
/// budget ran out before one was; the reference may have been). The largest smaller size whose rounds,
/// at least [`pool_search::FIRST_ROUNDS`] and all told, read within 2% of
/// the 5% line or above it ([`near_enough`]), and larger than any size the
/// confirmation rejected, is the answer: on a plateau
/// reached gradually (nginx on two shared cores) sizes from 8 to 12 read
/// 0.94–0.95× of pool:64, the budget ran out before one was confirmed, and
/// answering 64 provisioned five times what the service used. Else the
/// reference, as many connections as requests in flight, measured in every
/// round and healthy in each: the answer known to carry the load. Not
/// when it broke the bounds itself.
fn reference_pick<'a>(
    points: &'a [TunePoint],
    compared: &[&TuneComparison],
    family: &str,
    failed: &[usize],
) -> Result<(&'a TunePoint, Vec<usize>), String> {
    let none = || "the confirmation rejected every size it measured".to_string();
    let reference = compared.last().map(|c| c.reference).ok_or_else(none)?;
    let measured = |n: usize| {
        points
            .iter()
            .rev()
            .filter(|p| family_of(&p.strategy) == family && p.pool_size == n)
            .find(|p| matches!(p.phase, TunePhase::Pool | TunePhase::Confirm))
    };
    let verdicts = pool_search::verdicts(compared, failed);
    // A size the confirmation rejected: no smaller one is answered
    // unconfirmed (a size that read well once, below one that failed its
    // confirmation, read well by chance).
    let confirmed: Vec<usize> = compared
        .iter()
        .filter(|c| c.phase == TunePhase::Confirm && c.pool_size < reference)
        .map(|c| c.pool_size)
        .collect();
    let rejected = verdicts
        .iter()
        .filter(|v| confirmed.contains(&v.pool_size) && !v.good)
        .map(|v| v.pool_size)
        .max()
        .unwrap_or(0);
    let near = verdicts
        .into_iter()
        .filter(|v| v.pool_size < reference && v.pool_size > rejected)
        .filter(|v| !failed.contains(&v.pool_size))
        .filter(near_enough)
        .filter_map(|v| measured(v.pool_size))
        .max_by_key(|p| p.pool_size);
    if let Some(p) = near {
        return Ok((p, Vec::new()));
    }
    if failed.contains(&reference) {
        return Err(none());
    }
    measured(reference)
        .map(|p| (p, Vec::new()))
        .ok_or_else(none)
}

/// A size not confirmed that may still be answered: its rounds, at least
/// [`pool_search::FIRST_ROUNDS`], read above the 5% line or within 2% of it
/// ([`pool_search::near_line`]).
fn near_enough(v: &Verdict) -> bool {
    v.rounds >= pool_search::FIRST_ROUNDS && (v.good || pool_search::near_line(v))
}

/// Said when the answer is the reference though smaller sizes were
/// compared with it: which of them came close, or that none did.
fn reference_note(result: &TuneResult, p: &TunePoint) -> Option<poolbench_model::Inference> {
    let family = family_of(&p.strategy);
    let compared: Vec<&TuneComparison> = result
        .comparisons
        .iter()
        .filter(|c| c.family == family && c.reference == p.pool_size)
        .collect();
    let smaller: Vec<Verdict> = pool_search::verdicts(&compared, &[])
        .into_iter()
        .filter(|v| v.pool_size < p.pool_size)
        .collect();
    let closest = smaller.iter().max_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
    let unconfirmed: Vec<String> = smaller
        .iter()
        .filter(|v| v.good)
        .map(|v| v.pool_size.to_string())
        .collect();
    let text = match unconfirmed.is_empty() {
        true => format!(
            "{n} connections (the reference: the client's load, below any cliff) is the answer: no smaller pool compared with it read within 5% of its throughput (the closest, {}, at {:.3}× over {} rounds)",
            closest.pool_size,
            closest.ratio,
            closest.rounds,
            n = p.pool_size
        ),
        false => format!(
            "{n} connections (the reference: the client's load, below any cliff) is the answer: it carried the load in every round, and no smaller pool was confirmed ({} read within 5% of it before {}); a longer --budget gives the confirmation its rounds",
            unconfirmed.join(", "),
            match result.stopped_early {
                Some(_) => "the search stopped early",
                None => "the budget ran out or the confirmation read them lower",
            },
            n = p.pool_size
        ),
    };
    Some(poolbench_model::Inference {
        id: poolbench_model::InferenceId::ReferenceAnswer,
        text,
        evidence: format!("{} smaller sizes compared", smaller.len()),
    })
}

fn recommendation(p: &TunePoint, tied_with: Vec<usize>, scheme: &str) -> TuneRecommendation {
    let family = family_of(&p.strategy).to_string();
    TuneRecommendation {
        client_settings: settings(scheme, &family, p.pool_size),
        strategy: family,
        spec: p.strategy.clone(),
        pool_size: p.pool_size,
        throughput_rps: p.throughput_rps,
        throughput_ci95: p.throughput_ci95,
        p99_us: p.p99_us,
        cap: None,
        tied_with,
        timeouts: None,
    }
}

/// Why nothing is recommended: the cliff at the lowest load, the search
/// stopped early, or each family's own reason.
fn no_pick_reason(result: &TuneResult) -> String {
    let cap = &result.capacity;
    if cap.cliff_in_flight.is_some() && cap.max_rps <= 0.0 {
        return format!(
            "no pool is safe: the service fails even at {} in flight ({})",
            cap.cliff_in_flight.unwrap_or(1),
            cap.cliff_reason.as_deref().unwrap_or("")
        );
    }
    if let Some(why) = &result.stopped_early {
        return format!("the search could not finish: {why}");
    }
    let each: Vec<String> = result
        .families_found
        .iter()
        .map(|a| format!("{}: {}", a.family, a.reason.as_deref().unwrap_or("none")))
        .collect();
    format!("no pool meets the bounds ({})", each.join("; "))
}
