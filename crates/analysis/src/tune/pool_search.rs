//! Where the pool search measures next, for one strategy family at the
//! client's load: the smallest pool within 5% of the best throughput that
//! meets the SLO, found by bisection between the knee's guess and below.
use super::search::close_enough;
use super::verdict::{close_to_best, meets};
use poolbench_model::{Slo, TunePoint};

/// What to do next for one family.
#[derive(Clone, Debug, PartialEq)]
pub enum PoolStep {
    /// Measure this pool size.
    Measure(usize),
    /// The smallest good size, known within 10%.
    Done(usize),
    /// No size is good; why.
    Nothing(String),
}

/// The search's bounds for one family.
#[derive(Clone, Copy, Debug)]
pub struct PoolBounds {
    /// The largest size worth trying: the client's concurrency, below the
    /// cliff, at most `--max-pool`.
    pub upper: usize,
    /// The first guess below it (the capacity's knee).
    pub guess: usize,
    /// Stalls at least this long fail a point, seconds.
    pub stall_s: f64,
}

/// The next step of the search over `points` (this family's, at the
/// client's load).
pub fn next_pool(points: &[&TunePoint], slo: Option<&Slo>, b: PoolBounds) -> PoolStep {
    let measured = |n: usize| points.iter().any(|p| p.pool_size == n);
    if b.upper == 0 {
        return PoolStep::Nothing("no pool size below the cliff".into());
    }
    if !measured(b.upper) {
        return PoolStep::Measure(b.upper);
    }
    let guess = b.guess.clamp(1, b.upper);
    if !measured(guess) {
        return PoolStep::Measure(guess);
    }
    let ok: Vec<&&TunePoint> = points
        .iter()
        .filter(|p| meets(p, slo, b.stall_s).is_ok())
        .collect();
    let Some(best) = ok
        .iter()
        .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps))
    else {
        let largest = points.iter().max_by_key(|p| p.pool_size).expect("measured");
        let why = meets(largest, slo, b.stall_s).err().unwrap_or_default();
        return PoolStep::Nothing(format!(
            "no pool size meets the bounds: {} {why}",
            largest.strategy
        ));
    };
    // Within 5% of the best, or a tie with it: the smaller pool wins.
    let hi = ok
        .iter()
        .filter(|p| close_to_best(p, best))
        .map(|p| p.pool_size)
        .min()
        .expect("the best is within 5% of itself");
    let below: Vec<usize> = points
        .iter()
        .map(|p| p.pool_size)
        .filter(|&n| n < hi)
        .collect();
    let lo = below.iter().copied().max().unwrap_or(0);
    if hi == 1 || close_enough(lo, hi) {
        return PoolStep::Done(hi);
    }
    let mid = match (lo, below.is_empty() && hi >= guess) {
        // Just under the guess first: the answer is usually near it;
        // once below it, halve (a service that needs few connections is
        // found in a few steps, not in 15% ones).
        (0, true) => ((hi as f64 * 0.85).floor() as usize).max(1),
        (0, false) => (hi / 2).max(1),
        _ => (lo + hi) / 2,
    };
    PoolStep::Measure(mid.clamp(lo + 1, hi - 1))
}
