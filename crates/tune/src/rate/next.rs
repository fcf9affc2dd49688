//! The next rate to hold, from the points so far: up by doubling until a
//! rate fails, then the gap between the highest rate held and the lowest
//! failed halved (geometrically) until it is within 3%, then the answer
//! repeated. A rate holds when most of its holds did (two of three once
//! confirmed, as MLRsearch's exceed ratio of a half). A failure with a
//! growing backlog tells how much the service completed: the next rate is
//! tried just under and just over that before halving blindly.
use poolbench_model::{RatePhase, RatePoint, RateVerdict};

/// The answer lies within this share of itself when the search stops.
pub const WIDTH: f64 = 0.03;
/// Repetitions of the answer at the longer hold, besides its first hold.
pub const CONFIRM_REPS: usize = 2;
/// Rates below this (req/s) are not tried: nothing holds.
pub const LEAST_RATE: f64 = 0.5;
/// A rate not held: the next tried down is this share of it.
const DOWN: f64 = 0.25;

/// What to measure next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Hold this rate once, in this phase.
    Hold(f64, RatePhase),
    /// Nothing more to learn.
    Done,
}

/// The rates held and failed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bounds {
    /// The highest rate held below every failed one.
    pub lo: Option<f64>,
    /// The lowest rate that failed.
    pub hi: Option<f64>,
    /// The lowest rate poolbench could not send: nothing at or above it
    /// is tried.
    pub generator: Option<f64>,
}

/// Every rate measured, with how many of its holds held, of how many
/// (the generator's own failures left out).
pub fn tally(points: &[RatePoint]) -> Vec<(f64, usize, usize)> {
    let mut rates: Vec<(f64, usize, usize)> = Vec::new();
    for p in points
        .iter()
        .filter(|p| p.verdict != RateVerdict::GeneratorLimited)
    {
        match rates.iter_mut().find(|(r, _, _)| *r == p.rate_rps) {
            Some(t) => {
                t.1 += p.verdict.holds() as usize;
                t.2 += 1;
            }
            None => rates.push((p.rate_rps, p.verdict.holds() as usize, 1)),
        }
    }
    rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    rates
}

/// Held: most of its holds held.
pub fn held(held: usize, of: usize) -> bool {
    2 * held > of
}

pub fn bounds(points: &[RatePoint]) -> Bounds {
    let rates = tally(points);
    let hi = rates
        .iter()
        .find(|&&(_, h, n)| !held(h, n))
        .map(|&(r, _, _)| r);
    let lo = rates
        .iter()
        .rev()
        .filter(|&&(r, _, _)| hi.is_none_or(|hi| r < hi))
        .find(|&&(_, h, n)| held(h, n))
        .map(|&(r, _, _)| r);
    let generator = points
        .iter()
        .filter(|p| p.verdict == RateVerdict::GeneratorLimited)
        .map(|p| p.rate_rps)
        .min_by(f64::total_cmp);
    Bounds { lo, hi, generator }
}

/// The next rate, `start` first; none above `most` req/s.
pub fn next(points: &[RatePoint], start: f64, most: f64) -> Next {
    if points.is_empty() {
        return Next::Hold(start.min(most), RatePhase::Bracket);
    }
    let b = bounds(points);
    let ceiling = b.generator.map_or(most, |g| g.min(most));
    match (b.lo, b.hi) {
        (None, None) => Next::Done,
        (None, Some(hi)) => {
            let down = hi * DOWN;
            match down >= LEAST_RATE {
                true => Next::Hold(down, RatePhase::Bracket),
                false => Next::Done,
            }
        }
        (Some(lo), hi) => {
            let top = hi.unwrap_or(ceiling).min(ceiling);
            if top <= lo * (1.0 + WIDTH) {
                return confirm(points, lo);
            }
            // A rate poolbench could not send is never held again: the
            // search halves the gap below it instead.
            let below_generator = b.generator.is_none_or(|g| lo * 2.0 < g);
            match hi {
                None if below_generator => Next::Hold((lo * 2.0).min(top), RatePhase::Bracket),
                _ => Next::Hold(between(points, lo, top), RatePhase::Bisect),
            }
        }
    }
}

/// The answer held again until it has its repetitions.
fn confirm(points: &[RatePoint], lo: f64) -> Next {
    let repeated = points
        .iter()
        .filter(|p| p.rate_rps == lo && p.phase == RatePhase::Confirm)
        .count();
    match repeated < CONFIRM_REPS {
        true => Next::Hold(lo, RatePhase::Confirm),
        false => Next::Done,
    }
}

/// A rate between `lo` and `hi`: just under or over what the failure at
/// `hi` completed, if that falls well inside; else their geometric middle.
/// Only a failure by latency or backlog that completed clearly less than
/// its rate (the service saturated) tells the service's capacity.
fn between(points: &[RatePoint], lo: f64, hi: f64) -> f64 {
    let inside = |x: f64| x > lo * (1.0 + WIDTH / 3.0) && x < hi * (1.0 - WIDTH / 3.0);
    let saturated = |p: &&RatePoint| {
        matches!(p.verdict, RateVerdict::NotSustained | RateVerdict::Latency)
            && p.completed_rps < (1.0 - WIDTH) * p.rate_rps
    };
    let completed = points
        .iter()
        .filter(|p| p.rate_rps == hi)
        .filter(saturated)
        .map(|p| p.completed_rps)
        .next();
    completed
        .into_iter()
        .flat_map(|c| [c * 0.98, c * 1.02])
        .find(|&x| inside(x))
        .unwrap_or_else(|| (lo * hi).sqrt())
}
