//! The service's capacity from the capacity points: highest throughput,
//! knee, SLO crossing, cliff, retrograde fall, and how many it serves at
//! once (Little's law).
use super::failure::Failure;
use super::fit::{fit_curve, knee_of};
use super::point::failure;
use poolbench_model::{Capacity, Slo, TunePhase, TunePoint};

/// Share of the fitted curve's peak the knee reaches.
pub const KNEE_SHARE: f64 = 0.95;
/// Below this share of the peak, past it, throughput has fallen.
const RETROGRADE_SHARE: f64 = 0.9;
/// Below this share of the peak so far, and below half the level under
/// it, throughput has collapsed (a cliff); a gradual fall is a retrograde
/// service, not a failing one.
const COLLAPSE_SHARE: f64 = 0.25;
/// Below this share of the peak, however it got there, the service crawls:
/// a cliff too.
const CRAWL_SHARE: f64 = 0.1;
/// Below this share of the best level with at least half as many in
/// flight, throughput fell faster than contention makes it fall (the USL
/// curve keeps at least M/N of its throughput from M to N in flight, so
/// half within a doubling): a cliff whatever the peak, and however many
/// levels the search measured between.
const SUDDEN_SHARE: f64 = 0.4;

/// The capacity points, one per level of requests in flight (the last
/// measured where a level was measured twice), in order of that level.
pub fn capacity_points(points: &[TunePoint]) -> Vec<&TunePoint> {
    let mut by_level: Vec<&TunePoint> = Vec::new();
    for p in points.iter().filter(|p| p.phase == TunePhase::Capacity) {
        match by_level.iter_mut().find(|q| q.in_flight == p.in_flight) {
            Some(q) => *q = p,
            None => by_level.push(p),
        }
    }
    by_level.sort_by_key(|p| p.in_flight);
    by_level
}

/// Mean latency at the fewest requests in flight measured: the service
/// time as one request alone sees it, µs.
pub fn service_time_us(points: &[&TunePoint]) -> Option<f64> {
    points
        .iter()
        .find(|p| p.throughput_rps > 0.0 && p.mean_us > 0.0)
        .filter(|p| p.in_flight <= 2)
        .map(|p| p.mean_us / p.in_flight as f64)
}

/// Shortest stretch without a success that fails a point, seconds: half a
/// second, or four service times for slow services.
pub fn stall_threshold(service_time_us: Option<f64>) -> f64 {
    service_time_us.map_or(0.5, |s| (4.0 * s / 1e6).max(0.5))
}

/// The capacity the points show. `delayed_ack`: the latency is the
/// client's delayed ACK, not the service, so no "serves at once".
pub fn capacity(points: &[TunePoint], slo: Option<&Slo>, delayed_ack: bool) -> Capacity {
    let levels = capacity_points(points);
    let service = service_time_us(&levels);
    let stall_s = stall_threshold(service);
    let mut cap = Capacity {
        service_time_us: service,
        most_in_flight_tried: levels.last().map_or(0, |p| p.in_flight),
        ..Capacity::default()
    };
    let (good, cliff) = split_at_cliff(&levels, slo, stall_s);
    if let Some((at, why)) = &cliff {
        cap.cliff_in_flight = Some(*at);
        cap.cliff_reason = Some(why.to_string());
        cap.cliff_kind = Some(why.cliff_kind());
    }
    let Some(best) = good
        .iter()
        .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps))
    else {
        return cap;
    };
    cap.max_rps = best.throughput_rps;
    cap.max_rps_ci95 = best.throughput_ci95;
    cap.max_rps_in_flight = best.in_flight;
    // The knee off the fitted curve: one noisy level does not decide it.
    cap.fitted = fit_curve(&good);
    let (peak, knee) =
        knee_of(&cap.fitted, KNEE_SHARE).unwrap_or((best.throughput_rps, best.in_flight));
    cap.knee_in_flight = Some(knee);
    cap.slo_in_flight = slo
        .and_then(|s| s.p99_us)
        .and_then(|bound| good.iter().find(|p| p.p99_us > bound))
        .map(|p| p.in_flight);
    cap.retrograde_from = good
        .iter()
        .find(|p| {
            p.in_flight > best.in_flight
                && p.throughput_rps < RETROGRADE_SHARE * best.throughput_rps
        })
        .map(|p| p.in_flight);
    if !delayed_ack {
        cap.serves_at_once = serves_at_once(&good, (peak, knee), service);
    }
    // Only the most tried reached the highest throughput: never pushed,
    // so no knee is known (and none is said).
    cap.still_rising =
        cliff.is_none() && good.len() >= 2 && cap.knee_in_flight == Some(cap.most_in_flight_tried);
    if cap.still_rising {
        cap.knee_in_flight = None;
    }
    cap
}

/// The levels below the cliff, and the cliff: the first level that failed
/// (errors, stall) or whose throughput collapsed: below a quarter of the
/// peak of the levels under it and half the level just under it, below
/// 40% of the best level with at least half as many in flight, or below a
/// tenth of that peak.
pub fn split_at_cliff<'a>(
    levels: &[&'a TunePoint],
    slo: Option<&Slo>,
    stall_s: f64,
) -> (Vec<&'a TunePoint>, Option<(usize, Failure)>) {
    let mut good: Vec<&TunePoint> = Vec::new();
    let mut peak: f64 = 0.0;
    for p in levels {
        let before = good.last().map_or(0.0, |q| q.throughput_rps);
        let within_doubling = good
            .iter()
            .filter(|q| 2 * q.in_flight >= p.in_flight)
            .map(|q| q.throughput_rps)
            .fold(0.0, f64::max);
        let x = p.throughput_rps;
        let collapsed = x < CRAWL_SHARE * peak
            || x < SUDDEN_SHARE * within_doubling
            || (x < COLLAPSE_SHARE * peak && x < 0.5 * before);
        let why = failure(p, slo, stall_s).or_else(|| {
            collapsed.then(|| Failure::Collapsed {
                share: p.throughput_rps / peak,
            })
        });
        if let Some(why) = why {
            return (good, Some((p.in_flight, why)));
        }
        peak = peak.max(p.throughput_rps);
        good.push(*p);
    }
    (good, None)
}

/// Little's law where throughput has stopped growing: the service works
/// on about X × S requests at once (X its highest throughput, S the time
/// one request takes alone). Only when a level at least 1.5× the knee
/// still holds 90% of the peak (a plateau, latency growing linearly) and
/// the knee agrees with X × S within a factor of two.
fn serves_at_once(
    good: &[&TunePoint],
    (peak, knee): (f64, usize),
    service_us: Option<f64>,
) -> Option<usize> {
    let s = service_us? / 1e6;
    let n = peak * s;
    let knee = knee as f64;
    let plateau = good
        .iter()
        .any(|p| p.in_flight as f64 >= 1.5 * knee && p.throughput_rps >= RETROGRADE_SHARE * peak);
    let agrees = knee <= 2.0 * n.max(1.0) && n <= 2.0 * knee;
    (plateau && agrees && n >= 1.5).then(|| n.round() as usize)
}
