//! The answer of a rate search, read again from its points (as `report`
//! does for a saved search): the highest rate held, its repetitions and
//! interval, where it broke and how, and what it needs.
use super::next::{bounds, tally};
use poolbench_model::format::{duration_us, thousands};
use poolbench_model::{mean_ci95, FoundRate, RatePoint, RateResult, RateVerdict, Slo};

/// Fill `found` (or `reason`) from the points.
pub fn conclude(result: &mut RateResult) {
    let b = bounds(&result.rate_points);
    result.found = b.lo.map(|lo| found(result, lo, b.hi));
    result.reason = match &result.found {
        Some(_) => None,
        None => Some(no_rate(result)),
    };
}

fn found(result: &RateResult, lo: f64, hi: Option<f64>) -> FoundRate {
    let at: Vec<&RatePoint> = result
        .rate_points
        .iter()
        .filter(|p| p.rate_rps == lo && p.verdict != RateVerdict::GeneratorLimited)
        .collect();
    let (held, repetitions) = tally(&result.rate_points)
        .into_iter()
        .find(|t| t.0 == lo)
        .map_or((0, 0), |(_, h, n)| (h, n));
    let completed: Vec<f64> = at.iter().map(|p| p.completed_rps).collect();
    let (completed_rps, completed_ci95) = mean_ci95(&completed);
    let mean_us = at.iter().map(|p| p.mean_us).sum::<f64>() / at.len().max(1) as f64;
    let failing = hi.and_then(|hi| {
        result
            .rate_points
            .iter()
            .find(|p| p.rate_rps == hi && !p.verdict.holds())
    });
    let generator = bounds(&result.rate_points).generator;
    let mut f = FoundRate {
        rate_rps: lo,
        fails_at_rps: hi,
        width: hi.map(|hi| (hi - lo) / lo),
        fails_by: failing.map(|p| p.verdict),
        fails_why: failing.and_then(|p| p.why.clone()),
        held,
        repetitions,
        completed_rps,
        completed_ci95,
        p99_us: at.iter().map(|p| p.p99_us).fold(0.0, f64::max),
        in_flight_needed: lo * mean_us / 1e6,
        connections: at.iter().map(|p| p.connections).max().unwrap_or(0),
        summary: String::new(),
    };
    f.summary = summary(&f, &result.slo, generator);
    f
}

/// "holds 1,140 req/s within p99 < 50 ms (3 of 3 holds; within 3%):
/// fails at 1,190 req/s: the backlog grew 31 req/s. …"
fn summary(f: &FoundRate, slo: &Slo, generator: Option<f64>) -> String {
    let within = match f.width {
        Some(w) => format!("; the answer within {:.1}%", 100.0 * w),
        None => String::new(),
    };
    let head = format!(
        "holds {} req/s within {} ({} of {} holds held{within})",
        thousands(f.rate_rps),
        slo_words(slo),
        f.held,
        f.repetitions
    );
    let broke = match (f.fails_at_rps, &f.fails_why, generator) {
        (Some(hi), Some(why), _) => format!(
            "fails at {} req/s ({}): {why}",
            thousands(hi),
            f.fails_by.map_or("", |v| v.name())
        ),
        (None, _, Some(g)) => format!(
            "no rate failed below {} req/s, which poolbench could not send: the service may hold more",
            thousands(g)
        ),
        _ => "no rate tried failed: the service may hold more (raise --max-pool or give more --budget)".into(),
    };
    format!(
        "{head}; {broke}. At {} req/s it needs about {:.0} requests in flight (Little's law: {} req/s × {} mean latency); the pool opened {} connections at it",
        thousands(f.rate_rps),
        f.in_flight_needed.ceil(),
        thousands(f.rate_rps),
        duration_us(if f.rate_rps > 0.0 { f.in_flight_needed / f.rate_rps * 1e6 } else { 0.0 }),
        thousands(f.connections as f64)
    )
}

/// The SLO as words: `p99 < 50.0 ms, errors < 1%`.
pub fn slo_words(slo: &Slo) -> String {
    let mut parts: Vec<String> = slo
        .latency_bounds()
        .into_iter()
        .map(|(name, b)| format!("{name} < {}", duration_us(b)))
        .collect();
    let errors = slo.error_rate.unwrap_or(super::judge::DEFAULT_ERROR_RATE);
    parts.push(format!("errors < {}%", 100.0 * errors));
    parts.join(", ")
}

/// Why no rate is given: even the lowest rate tried failed, or nothing
/// was measured.
fn no_rate(result: &RateResult) -> String {
    let lowest = result
        .rate_points
        .iter()
        .filter(|p| !p.verdict.holds())
        .min_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    match (lowest, &result.stopped_early) {
        (Some(p), _) if p.verdict == RateVerdict::GeneratorLimited => format!(
            "no rate could be judged: {}",
            p.why.as_deref().unwrap_or("poolbench could not send")
        ),
        (Some(p), _) => format!(
            "no rate holds {}: even {} req/s failed ({}: {})",
            slo_words(&result.slo),
            thousands(p.rate_rps),
            p.verdict.name(),
            p.why.as_deref().unwrap_or("")
        ),
        (None, Some(why)) => format!("the search could not finish: {why}"),
        (None, None) => "nothing was measured".into(),
    }
}
