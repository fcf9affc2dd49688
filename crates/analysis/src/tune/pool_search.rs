//! Where the pool search measures next, for one strategy family at the
//! client's load. Every size is judged against the reference (the largest
//! size worth trying: as many connections as requests in flight, below
//! the cliff) by paired, interleaved runs, so the machine's drift touches
//! both alike. Sizes the capacity search points at (its knee, how many the
//! service serves at once, requests in flight over the streams a server
//! allows per connection) are judged first; then the search steps from
//! them and bisects until the smallest good size is known within 10%.
use super::search::close_enough;
use super::verdict::WITHIN_BEST;
use poolbench_model::{TuneComparison, TunePhase};

/// Below this many rounds a comparison near the line gets another.
pub const FIRST_ROUNDS: usize = 2;
/// Most rounds of one comparison in the pool search.
pub const MOST_ROUNDS: usize = 4;
/// Rounds of the confirmation of a pick.
pub const CONFIRM_ROUNDS: usize = 3;

/// What to do next for one family.
#[derive(Clone, Debug, PartialEq)]
pub enum PoolStep {
    /// Compare this size with the reference.
    Compare(usize),
    /// The smallest good size, known within 10%.
    Done(usize),
}

/// The search's bounds for one family.
#[derive(Clone, Debug)]
pub struct PoolBounds {
    /// The reference: the largest size worth trying (the client's load,
    /// below the cliff, at most `--max-pool`).
    pub upper: usize,
    /// Sizes the capacity search points at, most trusted first.
    pub guesses: Vec<usize>,
}

/// One size's verdict from every round of its comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub pool_size: usize,
    /// Mean of the rounds' ratios (size ÷ reference).
    pub ratio: f64,
    /// Half-width of the ratio's 95% interval (0 with one round).
    pub ci95: f64,
    pub rounds: usize,
    /// Within 5% of the reference, and every run of it met the bounds.
    pub good: bool,
}

/// The verdicts of one family's comparisons (`failed`: sizes with a run
/// that broke the bounds), one per size, in order of size.
pub fn verdicts(comparisons: &[&TuneComparison], failed: &[usize]) -> Vec<Verdict> {
    let mut sizes: Vec<usize> = comparisons.iter().map(|c| c.pool_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|n| {
            let ratios: Vec<f64> = comparisons
                .iter()
                .filter(|c| c.pool_size == n)
                .flat_map(|c| c.ratios.iter().copied())
                .collect();
            let (ratio, ci95) = mean_ci(&ratios);
            Verdict {
                pool_size: n,
                ratio,
                ci95,
                rounds: ratios.len(),
                good: ratio >= WITHIN_BEST && !failed.contains(&n),
            }
        })
        .collect()
}

/// A comparison needs another round: too few yet, or its interval
/// straddles the line and rounds are left.
pub fn needs_round(ratios: &[f64], most: usize) -> bool {
    let (mean, ci) = mean_ci(ratios);
    ratios.len() < FIRST_ROUNDS
        || (ratios.len() < most && (mean - WITHIN_BEST).abs() < ci.max(0.02))
}

/// Mean and 95% half-width (normal approximation; 0 with one value).
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// The next step of the search, from the verdicts so far.
pub fn next_pool(judged: &[Verdict], b: &PoolBounds) -> PoolStep {
    let upper = b.upper.max(1);
    // The reference is good by definition; the smallest good size above
    // every bad one below it brackets the answer.
    let hi = judged
        .iter()
        .filter(|v| v.good)
        .map(|v| v.pool_size)
        .chain([upper])
        .min()
        .unwrap_or(upper);
    let lo = judged
        .iter()
        .filter(|v| !v.good && v.pool_size < hi)
        .map(|v| v.pool_size)
        .max()
        .unwrap_or(0);
    if hi == 1 || (lo > 0 && close_enough(lo, hi)) {
        return PoolStep::Done(hi);
    }
    let tried = |n: usize| judged.iter().any(|v| v.pool_size == n) || n == upper;
    if let Some(&g) = b.guesses.iter().find(|&&g| g > lo && g < hi && !tried(g)) {
        return PoolStep::Compare(g);
    }
    let guessed = b.guesses.contains(&hi);
    let next = match (lo, hi == upper) {
        // Down from a good guess in steps (the answer is usually near
        // it), from the reference by halves.
        (0, _) if guessed => (hi * 2 / 3).max(1),
        (0, _) => (hi / 2).max(1),
        // Up from a bad guess in steps, not straight to the middle.
        (_, true) => ((lo as f64 * 1.5).ceil() as usize).min((lo + hi) / 2),
        _ => (lo + hi) / 2,
    };
    PoolStep::Compare(next.clamp(lo + 1, hi - 1))
}

/// The pick of one family: the smallest size confirmed good (a
/// confirmation round behind it, and good over all its rounds).
pub fn confirmed_pick(comparisons: &[&TuneComparison], failed: &[usize]) -> Option<Verdict> {
    let confirmed: Vec<usize> = comparisons
        .iter()
        .filter(|c| c.phase == TunePhase::Confirm)
        .map(|c| c.pool_size)
        .collect();
    verdicts(comparisons, failed)
        .into_iter()
        .find(|v| v.good && confirmed.contains(&v.pool_size))
}
