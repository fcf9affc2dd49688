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
    /// No size below this is worth judging (1: any): for a multiplexed
    /// family whose server allows S streams per connection, fewer than
    /// ⌈in flight ÷ S⌉ connections leave requests waiting in the client
    /// while the service could still take them.
    pub least: usize,
}

/// One size's verdict from every round of its comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub pool_size: usize,
    /// The rounds' ratios (size ÷ reference) averaged geometrically: a
    /// ratio of two noisy runs is skewed upwards, its logarithm is not.
    pub ratio: f64,
    /// Half-width of the log ratio's 95% interval (0 with one round).
    pub ci95: f64,
    pub rounds: usize,
    /// No run broke the bounds, and the rounds' mean ratio is within 5%
    /// of the best (the reference, or a size that beat it). An interval
    /// that reaches the line is not enough: a size at 0.93× whose rounds
    /// scatter would pass, and a grid then finds it 10% short.
    pub good: bool,
}

/// The verdicts of one family's comparisons (`failed`: sizes with a run
/// that broke the bounds), one per size, in order of size; comparisons set
/// aside do not count.
pub fn verdicts(comparisons: &[&TuneComparison], failed: &[usize]) -> Vec<Verdict> {
    let counted: Vec<&TuneComparison> = comparisons
        .iter()
        .copied()
        .filter(|c| c.set_aside.is_none())
        .collect();
    let comparisons = &counted[..];
    let mut sizes: Vec<usize> = comparisons.iter().map(|c| c.pool_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let logs: Vec<(usize, usize, (f64, f64))> = sizes
        .into_iter()
        .map(|n| {
            let ratios: Vec<f64> = comparisons
                .iter()
                .filter(|c| c.pool_size == n)
                .flat_map(|c| c.ratios.iter().copied())
                .collect();
            (n, ratios.len(), log_mean_ci(&ratios))
        })
        .collect();
    // The best measured: the reference, or a size whose whole interval lies
    // above it (a service that slows with more in flight); each size is
    // judged against that. Only the interval's low end counts, or the
    // noisiest size would set the line; and that interval is Student's t
    // for the rounds there are: with two or three rounds the normal
    // interval is a third to a sixth as wide as it should be, and on a
    // noisy plateau (nginx with the generator saturated) one lucky size
    // then raised the line for all, and the search climbed.
    let best = logs
        .iter()
        .filter(|(n, _, _)| !failed.contains(n))
        .map(|(_, rounds, (log, ci))| log - ci * student_t(*rounds) / 1.96)
        .fold(0.0, f64::max);
    logs.into_iter()
        .map(|(n, rounds, (log, ci95))| Verdict {
            pool_size: n,
            ratio: log.exp(),
            ci95,
            rounds,
            good: log - best >= WITHIN_BEST.ln() && !failed.contains(&n),
        })
        .collect()
}

/// Student's t at 97.5% for `n` values (n − 1 degrees of freedom);
/// the normal 1.96 from 31 on, and for fewer than two.
fn student_t(n: usize) -> f64 {
    const T: [f64; 10] = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23];
    match n {
        2..=11 => T[n - 2],
        12..=30 => 2.1,
        _ => 1.96,
    }
}

/// A bad size at or above this ratio missed the line narrowly: the
/// search steps up from it by a fifth, not a half.
const NEAR_MISS: f64 = 0.9;

/// Below this ratio a comparison gets no more rounds, however wide its
/// interval: it will not reach the line.
const HOPELESS: f64 = 0.9;

/// A comparison needs another round: too few yet, or its interval
/// straddles the line and rounds are left.
pub fn needs_round(ratios: &[f64], most: usize) -> bool {
    let (log, ci) = log_mean_ci(ratios);
    ratios.len() < FIRST_ROUNDS || (ratios.len() < most && straddles(log, ci))
}

/// How near the 5% line (in log ratio) a comparison reads when it is
/// near whatever its interval.
const NEAR: f64 = 0.02;

/// A mean log ratio (size ÷ reference) with its 95% half-width straddles
/// the 5% line: within the larger of [`NEAR`] and the interval, and not
/// below [`HOPELESS`].
fn straddles(log: f64, ci: f64) -> bool {
    (log - WITHIN_BEST.ln()).abs() < ci.max(NEAR) && log.exp() >= HOPELESS
}

/// A size whose rounds, all of them, read within 2% of the 5% line
/// (0.931× to 0.969× of the reference): whether it is within 5% is the
/// noise's to say. Only the value counts, not the interval: a size at
/// 1.0× over two wide rounds is not near the line.
pub fn near_line(v: &Verdict) -> bool {
    (v.ratio.ln() - WITHIN_BEST.ln()).abs() < NEAR
}

/// Mean of the logarithms and its 95% half-width (normal approximation;
/// 0 with one value). A round that got nothing counts as 1%.
fn log_mean_ci(xs: &[f64]) -> (f64, f64) {
    let logs: Vec<f64> = xs.iter().map(|x| x.max(0.01).ln()).collect();
    let n = logs.len() as f64;
    if logs.is_empty() {
        return (f64::NEG_INFINITY, 0.0);
    }
    let mean = logs.iter().sum::<f64>() / n;
    if logs.len() < 2 {
        return (mean, 0.0);
    }
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Under this share of a smaller size's ratio, a size's rounds are the
/// machine's, not the size's (on a service that does not slow with more
/// connections): nginx at 64 in flight, with the machine a third slower
/// than usual for a whole search, read pool:8 at 0.94× of pool:64 and
/// then pool:12 at 0.72× and 0.78×, the reference 26% faster in both
/// rounds than in any other, and the search climbed to 24.
pub const DISTURBED: f64 = 0.85;

/// Above this share of its usual reading (the median of the earlier
/// ones), the reference of a size that read under the line was fast, not
/// the size slow.
pub const FAST_REFERENCE: f64 = 1.15;

/// Why the rounds of `new` cannot be the size's: they read under
/// `DISTURBED` of what a smaller size compared with the same reference
/// read (over at least `FIRST_ROUNDS` rounds); or under the line while
/// the reference read above `FAST_REFERENCE` of its usual (`reads`: the
/// reference's throughput at the client's load, each time this family
/// measured it, this comparison's last; two earlier at least). Only for a
/// service that does not slow with more connections; the caller knows.
pub fn disturbed(
    earlier: &[&TuneComparison],
    new: &TuneComparison,
    reads: &[f64],
) -> Option<String> {
    let read = log_mean_ci(&new.ratios).0.exp();
    let mine: Vec<&TuneComparison> = earlier
        .iter()
        .copied()
        .filter(|c| c.family == new.family && c.reference == new.reference)
        .collect();
    let smaller = verdicts(&mine, &[])
        .into_iter()
        .filter(|v| v.pool_size < new.pool_size && v.rounds >= FIRST_ROUNDS)
        .map(|v| (v.pool_size, v.ratio))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((n, ratio)) = smaller.filter(|(_, r)| read < DISTURBED * r) {
        return Some(format!(
            "read {read:.2}× with {} connections against {ratio:.2}× with {n}: fewer connections carried more, so the machine's speed, not the size, moved these rounds; compared again",
            new.pool_size
        ));
    }
    let (&now, before) = reads.split_last()?;
    if before.len() < 2 {
        return None;
    }
    let mut before = before.to_vec();
    before.sort_by(f64::total_cmp);
    let usual = *before.get(before.len() / 2)?;
    (read < WITHIN_BEST && now > FAST_REFERENCE * usual).then(|| {
        format!(
            "read {read:.2}× while the reference carried {:.2}× its usual: the machine's speed, not the size, moved these rounds; compared again",
            now / usual
        )
    })
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
        .unwrap_or(0)
        .max(b.least.min(hi).saturating_sub(1));
    if hi == 1 || (lo > 0 && close_enough(lo, hi)) || hi <= b.least {
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
        // Up from a bad guess in steps, not straight to the middle: a
        // fifth more where it missed the line narrowly (round-robin:10 at
        // 0.94× with a server allowing 10 streams at c=100: a half more,
        // 15, left no budget to come back down), a half more otherwise.
        (_, true) => {
            let near = judged
                .iter()
                .any(|v| v.pool_size == lo && v.ratio >= NEAR_MISS);
            let step = if near { 1.2 } else { 1.5 };
            ((lo as f64 * step).ceil() as usize).min((lo + hi) / 2)
        }
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
