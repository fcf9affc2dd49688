//! Where the capacity search measures next: raise the requests in flight
//! geometrically to the cliff or the limit, then bisect the cliff, the
//! knee and the SLO crossing until each is known within 10%.
use super::capacity::{
    capacity, capacity_points, service_time_us, split_at_cliff, stall_threshold,
};
use super::point::failure;
use poolbench_model::{Slo, TunePhase, TunePoint};

/// Bounds of the capacity search.
#[derive(Clone, Copy, Debug)]
pub struct CapacityLimits {
    /// Raise at least this far (the client's concurrency) unless the
    /// service fails first.
    pub want: usize,
    /// Never above this (descriptors, `--max-pool`-like caps).
    pub most: usize,
}

/// Two levels this close are the same for the search's purposes.
pub fn close_enough(lo: usize, hi: usize) -> bool {
    hi <= lo + 1 || (hi as f64) <= 1.1 * lo as f64
}

/// The next level of requests in flight to measure, or `None` when the
/// capacity is known well enough.
pub fn next_level(
    points: &[TunePoint],
    slo: Option<&Slo>,
    limits: CapacityLimits,
) -> Option<usize> {
    let levels = capacity_points(points);
    let Some(top) = levels.last() else {
        return Some(1);
    };
    let stall_s = stall_threshold(service_time_us(&levels));
    let (good, cliff) = split_at_cliff(&levels, slo, stall_s);
    if let Some((at, _)) = cliff {
        // A failure seen once is measured again (after the service has
        // recovered) before it counts as the cliff.
        // A freeze that left one request alone unanswered for seconds is
        // not noise: provoking it again would only freeze the service
        // again (and a freeze may outlast what the user allowed).
        let at_level = |p: &&TunePoint| p.phase == TunePhase::Capacity && p.in_flight == at;
        let tries = points.iter().filter(at_level).count();
        let failed: Vec<usize> = (0..points.len())
            .filter(|&i| at_level(&&points[i]) && failure(&points[i], slo, stall_s).is_some())
            .collect();
        let hard = failed.iter().any(|&i| froze_hard(points, i));
        if tries < 2 && !failed.is_empty() && !hard {
            return Some(at);
        }
    }
    let cap = capacity(points, slo, false);
    let top_good = good.last().map_or(0, |p| p.in_flight);
    if cliff.is_none() && top.in_flight < limits.most && !raised_enough(&cap, top, limits) {
        return Some((top.in_flight * 2).min(limits.most));
    }
    let measured: Vec<usize> = levels.iter().map(|p| p.in_flight).collect();
    // The cliff: between the last good level and the first failing one.
    if let Some(at) = cap.cliff_in_flight {
        if let Some(mid) = midpoint(top_good, at, &measured) {
            return Some(mid);
        }
    }
    // The knee, and the SLO crossing: between a level below and the level.
    for edge in [cap.knee_in_flight, cap.slo_in_flight]
        .into_iter()
        .flatten()
    {
        let below = measured
            .iter()
            .copied()
            .filter(|&l| l < edge)
            .max()
            .unwrap_or(0);
        if let Some(mid) = midpoint(below, edge, &measured) {
            return Some(mid);
        }
    }
    None
}

/// How long the first one-request ping after a failing point went
/// unanswered for the failure to count without being measured again.
const HARD_FREEZE_US: f64 = 5e6;

/// The service, after failing at `points[i]`, did not answer its first
/// recovery ping (one request alone) within `HARD_FREEZE_US`.
fn froze_hard(points: &[TunePoint], i: usize) -> bool {
    points[i + 1..]
        .iter()
        .take_while(|p| p.phase == TunePhase::Recovery)
        .find(|p| p.in_flight == 1)
        .is_some_and(|p| p.requests == p.errors || p.mean_us >= HARD_FREEZE_US)
}

/// Whether raising further would tell nothing new: past the client's
/// load, and past four times the knee or still scaling as one request
/// alone does (the service is not the limit at the client's load).
fn raised_enough(cap: &poolbench_model::Capacity, top: &TunePoint, limits: CapacityLimits) -> bool {
    if top.in_flight < limits.want {
        return false;
    }
    let linear = cap
        .service_time_us
        .is_some_and(|s| top.throughput_rps >= LINEAR_SHARE * top.in_flight as f64 / (s / 1e6));
    // No knee while throughput still rises at the top.
    linear
        || cap
            .knee_in_flight
            .is_some_and(|knee| top.in_flight >= 4 * knee)
}

/// Share of in flight ÷ service time at which a level still scales as
/// one request alone does.
const LINEAR_SHARE: f64 = 0.8;

/// A level between `lo` and `hi` not measured yet, while they are more
/// than 10% apart.
fn midpoint(lo: usize, hi: usize, measured: &[usize]) -> Option<usize> {
    if close_enough(lo, hi) {
        return None;
    }
    let mid = match lo {
        0 => hi / 2,
        _ => ((lo as f64 * hi as f64).sqrt().round() as usize).clamp(lo + 1, hi - 1),
    };
    (!measured.contains(&mid) && mid > 0).then_some(mid)
}
