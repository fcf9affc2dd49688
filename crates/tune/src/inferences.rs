//! What a person would conclude from the search, in words, each with the
//! figures it rests on.
use super::capacity::capacity_points;
use super::search::close_enough;
use poolbench_analysis::findings::pool_bound;
use poolbench_model::findings::Id;
use poolbench_model::{Capacity, CliffKind, Finding, Inference, InferenceId, TunePhase, TunePoint};

use poolbench_model::format::duration_us as ms;

use poolbench_model::format::thousands as rps;

fn say(id: InferenceId, text: String, evidence: String) -> Inference {
    Inference { id, text, evidence }
}

/// Every conclusion the capacity, the points and the findings support.
pub fn inferences(cap: &Capacity, points: &[TunePoint], findings: &[Finding]) -> Vec<Inference> {
    let levels = capacity_points(points);
    let mut out = Vec::new();
    out.extend(serves_at_once(cap, &levels));
    out.extend(cliff(cap, &levels));
    out.extend(retrograde(cap, &levels));
    out.extend(slo_crossing(cap, &levels));
    out.extend(pool_bound(points, cap));
    out.extend(streams(points));
    out.extend(delayed_acks(findings));
    out
}

/// The capacity point measured at `n` in flight, if any.
fn at<'a>(levels: &[&'a TunePoint], n: usize) -> Option<&'a TunePoint> {
    levels.iter().find(|p| p.in_flight == n).copied()
}

/// How many requests the service serves at a time, by Little's law.
fn serves_at_once(cap: &Capacity, levels: &[&TunePoint]) -> Option<Inference> {
    let (n, s) = (cap.serves_at_once?, cap.service_time_us?);
    let top = levels.last().map_or(0, |p| p.in_flight);
    Some(say(
        InferenceId::ServesAtOnce,
        format!("the service serves about {n} at a time"),
        format!(
            "throughput stops growing at {} in flight ({} req/s) while latency grows with every request added ({} alone, {} at {top} in flight): N ≈ X × S = {} × {} ≈ {n} (Little's law)",
            cap.knee_in_flight.unwrap_or(n), rps(cap.max_rps), ms(s),
            ms(at(levels, top).map_or(0.0, |p| p.mean_us)), rps(cap.max_rps), ms(s)
        ),
    ))
}

/// Where the service fails or freezes, with how it did just below.
fn cliff(cap: &Capacity, levels: &[&TunePoint]) -> Option<Inference> {
    let (n, why) = (cap.cliff_in_flight?, cap.cliff_reason.as_deref()?);
    let below = levels.iter().rev().find(|p| p.in_flight < n);
    let before = below.map_or(String::new(), |b| {
        format!(
            "; at {} in flight: {} req/s, {:.1}% errors",
            b.in_flight,
            rps(b.throughput_rps),
            b.error_rate * 100.0
        )
    });
    Some(say(
        InferenceId::Cliff,
        cliff_text(cap.cliff_kind, n, below.copied()),
        format!("at {n} in flight: {why}{before}"),
    ))
}

/// The cliff at `n` in words, as narrowly as the search placed it above `below`.
fn cliff_text(kind: Option<CliffKind>, n: usize, below: Option<&TunePoint>) -> String {
    let verb = match kind {
        Some(CliffKind::Freezes) => "freezes",
        Some(CliffKind::Fails) | None => "fails",
    };
    match below {
        Some(b) if close_enough(b.in_flight, n) => format!(
            "the service {verb} with more than {} in flight",
            b.in_flight
        ),
        // Not narrowed: say only what was measured.
        Some(b) => format!(
            "the service {verb} at {n} in flight, not at {} (the search did not narrow it further)",
            b.in_flight
        ),
        None => format!("the service {verb} even with {n} in flight"),
    }
}

/// Throughput falling, without errors, past its peak.
fn retrograde(cap: &Capacity, levels: &[&TunePoint]) -> Option<Inference> {
    let (n, peak) = (cap.retrograde_from?, at(levels, cap.max_rps_in_flight)?);
    let fell = at(levels, n).map_or(0.0, |p| p.throughput_rps);
    Some(say(
        InferenceId::Retrograde,
        format!("throughput falls past {} in flight", peak.in_flight),
        format!(
            "{} req/s at {} in flight, {} at {n} without errors: more requests at once make the service slower (contention, a blocked event loop)",
            rps(peak.throughput_rps), peak.in_flight, rps(fell)
        ),
    ))
}

/// Where p99 crosses the SLO, with the p99 measured there.
fn slo_crossing(cap: &Capacity, levels: &[&TunePoint]) -> Option<Inference> {
    let n = cap.slo_in_flight?;
    let p = at(levels, n)?;
    Some(say(
        InferenceId::SloCrossing,
        format!("p99 crosses the SLO at {n} in flight"),
        format!("p99 {} at {n} in flight", ms(p.p99_us)),
    ))
}

/// Latency from delayed ACKs (the findings' evidence): not the service's.
fn delayed_acks(findings: &[Finding]) -> impl Iterator<Item = Inference> + '_ {
    findings.iter().filter(|f| f.id == Id::DelayedAck).map(|f| {
        say(
            InferenceId::DelayedAck,
            "the answer waits for our acknowledgement (the server's Nagle meets the client's delayed ACK): the latency is not the service's".to_string(),
            f.evidence.first().cloned().unwrap_or_default(),
        )
    })
}

/// The server's limit on streams per connection, where a multiplexed
/// strategy met it: the connections the client's load needs.
fn streams(points: &[TunePoint]) -> Option<Inference> {
    let p = points
        .iter()
        .filter(|p| p.streams_allowed.is_some_and(|s| s > 1))
        .min_by_key(|p| p.streams_allowed)?;
    let s = p.streams_allowed? as usize;
    let load = points
        .iter()
        .map(|p| p.in_flight)
        .max()
        .unwrap_or(p.in_flight);
    let client = points
        .iter()
        .find(|q| q.phase != TunePhase::Capacity)
        .map_or(load, |q| q.in_flight);
    Some(say(
        InferenceId::StreamsPerConnection,
        format!(
            "the server allows {s} streams per connection: {client} requests in flight need {} connections to run at once",
            client.div_ceil(s)
        ),
        format!(
            "the server's SETTINGS_MAX_CONCURRENT_STREAMS is {s} (seen on {}); more requests than connections × {s} wait in the client",
            p.strategy
        ),
    ))
}

/// Pool points where the pool, not the service, set the throughput:
/// fewer connections than workers, throughput ≈ pool ÷ service time.
fn pool_bound(points: &[TunePoint], cap: &Capacity) -> Option<Inference> {
    let s = cap.service_time_us? / 1e6;
    let bound: Vec<&TunePoint> = points
        .iter()
        .filter(|p| p.phase == TunePhase::Pool && p.pool_size < p.in_flight && p.rate.is_none())
        .filter(|p| {
            let expected = p.pool_size as f64 / s;
            pool_bound::shows(p.throughput_rps, expected, p.checkout_wait_share)
                && p.throughput_rps < 0.95 * cap.max_rps
        })
        .collect();
    let p = bound.iter().max_by_key(|p| p.pool_size)?;
    Some(say(
        InferenceId::PoolBound,
        format!("the pool was the bottleneck up to {} connections", p.pool_size),
        format!(
            "{} at c={}: {} req/s ≈ {} connections ÷ {} per request, {:.0}% of latency waiting for a connection",
            p.strategy, p.in_flight, rps(p.throughput_rps), p.pool_size, ms(s * 1e6), p.checkout_wait_share * 100.0
        ),
    ))
}
