//! The last look at a pick before it is said: never one that failed or
//! carried nothing, never one far below what the service did without
//! saying why; a pick at a load above the cliff is a cap, and a client
//! whose workers set the throughput is told so (the closed-loop ceiling).
use super::capacity::{capacity_points, stall_threshold};
use super::point::failure;
use super::search::close_enough;
use poolbench_analysis::findings::closed_loop_ceiling::at_ceiling;
use poolbench_model::{
    CliffKind, Inference, InferenceId, TuneLoad, TunePhase, TunePoint, TuneResult,
};

/// Below this share of the capacity's peak a pick needs a reason.
const HALF: f64 = 0.5;

/// Whether `p` may be recommended; `Err`: why not. `Ok(Some(_))`: it
/// may, though it read under half the peak, because another run of the
/// same pool at the same load carried it: the inference says so, with
/// both figures, as the recommendation quotes the low one.
pub fn vet(result: &TuneResult, p: &TunePoint) -> Result<Option<Inference>, String> {
    if p.throughput_rps <= 0.0 || p.requests == 0 {
        return Err(format!("{} answered nothing", p.strategy));
    }
    let cap = &result.capacity;
    if p.throughput_rps >= HALF * cap.max_rps || ceiling(result, p).is_some() {
        return Ok(None);
    }
    if let TuneLoad::Rate(r) = result.load {
        if p.throughput_rps >= 0.9 * r {
            return Ok(None);
        }
    }
    // What the client's load got with one connection per request.
    let load = client_in_flight(result, p);
    let alike = capacity_points(&result.points)
        .into_iter()
        .rfind(|q| q.in_flight <= load)
        .is_some_and(|q| q.throughput_rps <= 1.25 * p.throughput_rps);
    if alike {
        return Ok(None);
    }
    // The same pool at the same load carried it in another run that did
    // not fail: this run's low figure is the machine's (a busy
    // neighbour), not the pool's.
    let stall_s = stall_threshold(cap.service_time_us);
    let carried = result
        .points
        .iter()
        .filter(|q| {
            q.phase != TunePhase::Capacity
                && q.strategy == p.strategy
                && q.in_flight == p.in_flight
                && q.throughput_rps >= HALF * cap.max_rps
                && failure(q, result.slo.as_ref(), stall_s).is_none()
        })
        .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps));
    match carried {
        Some(q) => Ok(Some(Inference {
            id: InferenceId::SlowConfirmation,
            text: format!(
                "{} read {:.0} req/s in its {}, under half the service's {:.0}; another run of it carried {:.0}: the low run was the machine's (a busy neighbour), not the pool's",
                p.strategy, p.throughput_rps, phase_name(p.phase), cap.max_rps, q.throughput_rps
            ),
            evidence: format!(
                "{} at {} in flight: {:.0} req/s in the {}, {:.0} in the {} (the recommendation quotes the latter); the capacity search's peak {:.0} req/s at {} in flight",
                p.strategy, p.in_flight, q.throughput_rps, phase_name(q.phase), p.throughput_rps, phase_name(p.phase), cap.max_rps, cap.max_rps_in_flight
            ),
        })),
        None => Err(format!(
            "the best pool, {}, carried {:.0} req/s, under half the {:.0} req/s the service gave {} in flight, and nothing explains it",
            p.strategy, p.throughput_rps, cap.max_rps, cap.max_rps_in_flight
        )),
    }
}

/// The part of the search that measured a point, in words.
fn phase_name(phase: TunePhase) -> &'static str {
    match phase {
        TunePhase::Capacity => "capacity search",
        TunePhase::Recovery => "wait for recovery",
        TunePhase::Pool => "pool search",
        TunePhase::Confirm => "confirmation",
    }
}

fn client_in_flight(result: &TuneResult, p: &TunePoint) -> usize {
    match result.load {
        TuneLoad::Concurrency(c) => c,
        TuneLoad::Rate(_) => p.in_flight,
    }
}

/// With the client's load above the cliff and a pool that bounds requests
/// in flight, the pick is a cap: why, in words.
pub fn cap_reason(result: &TuneResult, p: &TunePoint) -> Option<String> {
    let cliff = result.capacity.cliff_in_flight?;
    let family = p.strategy.split(':').next().unwrap_or_default();
    if !matches!(family, "pool" | "take-or-create") {
        return None;
    }
    if client_in_flight(result, p) < cliff {
        return None;
    }
    let fine = capacity_points(&result.points)
        .into_iter()
        .filter(|q| q.in_flight < cliff)
        .map(|q| q.in_flight)
        .max()
        .unwrap_or(cliff.saturating_sub(1));
    let verb = match result.capacity.cliff_kind {
        Some(CliffKind::Freezes) => "freezes",
        Some(CliffKind::Fails) | None => "fails",
    };
    Some(match close_enough(fine, cliff) {
        true => format!("above {fine} in flight this service {verb}"),
        false => format!("at {cliff} in flight this service {verb} (not at {fine})"),
    })
}

/// The client's own ceiling: its workers each wait one service time, so
/// the throughput is workers ÷ service time whatever the pool.
pub fn ceiling(result: &TuneResult, p: &TunePoint) -> Option<Inference> {
    let TuneLoad::Concurrency(c) = result.load else {
        return None;
    };
    let s = result.capacity.service_time_us? / 1e6;
    let x = c as f64 / s;
    if !at_ceiling(p.throughput_rps, x) {
        return None;
    }
    let carries = match p.pool_size {
        1 => "one connection carries it".to_string(),
        n => format!("{n} connections carry it"),
    };
    Some(Inference {
        id: InferenceId::ClosedLoopCeiling,
        text: format!(
            "your {c} workers wait {} each: {:.0} req/s whatever the pool; {carries}",
            secs(s),
            x
        ),
        evidence: format!(
            "{} at c={c}: {:.0} req/s = {:.0}% of {c} ÷ {} (one request alone); more throughput needs more workers, not more connections",
            p.strategy,
            p.throughput_rps,
            100.0 * p.throughput_rps / x,
            secs(s)
        ),
    })
}

fn secs(s: f64) -> String {
    match s {
        s if s >= 0.1 => {
            let t = format!("{s:.2}");
            format!("{} s", t.trim_end_matches('0').trim_end_matches('.'))
        }
        s => format!("{:.1} ms", s * 1000.0),
    }
}
