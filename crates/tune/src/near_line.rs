//! Said when the pick is one of several sizes that read near the 5% line.
//! On a plateau reached gradually (nginx on two shared cores: 0.93× of the
//! best at 8 connections, 0.97× at 12) the smallest size within 5% of the
//! best is not sharply placed: each size there reads within its rounds'
//! noise of the line, and another run may pick a neighbour. The note names
//! those sizes, so that two runs' answers are read as one.
use super::pool_search::{self, Verdict};
use poolbench_model::{Inference, InferenceId, TuneComparison, TunePhase, TunePoint};

/// The sizes compared with the pick's reference that read near the line,
/// where there are others than the pick (`family`: the pick's; `failed`:
/// sizes whose runs broke the bounds, never named).
pub(super) fn note(
    comparisons: &[TuneComparison],
    pick: &TunePoint,
    family: &str,
    failed: &[usize],
) -> Option<Inference> {
    let reference = comparisons
        .iter()
        .rev()
        .find(|c| c.family == family)?
        .reference;
    if pick.pool_size >= reference {
        return None;
    }
    let compared: Vec<&TuneComparison> = comparisons
        .iter()
        .filter(|c| c.family == family && c.reference == reference)
        .collect();
    let near: Vec<Verdict> = pool_search::verdicts(&compared, failed)
        .into_iter()
        .filter(|v| !failed.contains(&v.pool_size) && pool_search::near_line(v))
        .collect();
    let sizes = || near.iter().map(|v| v.pool_size).chain([pick.pool_size]);
    let (lo, hi) = (sizes().min()?, sizes().max()?);
    if lo == hi {
        return None;
    }
    let each: Vec<String> = near
        .iter()
        .map(|v| format!("pool:{} {:.3}× ({} rounds)", v.pool_size, v.ratio, v.rounds))
        .collect();
    Some(Inference {
        id: InferenceId::PickNearLine,
        text: format!(
            "the smallest pool within 5% of the best is not sharply placed here: sizes from {lo} to {hi} read within 2% of the line, so another run may pick another of them"
        ),
        evidence: format!(
            "{} against {family}:{reference} (the line 0.950×; within 2% of it, 0.931× to 0.969×); picked {}",
            each.join(", "),
            pick.pool_size
        ),
    })
}

/// Said when the pick was not confirmed: no smaller size was, and the
/// pick, the largest whose rounds read near the line or above it, is
/// answered rather than the reference (`lib.rs`, `reference_pick`).
pub(super) fn unconfirmed(
    comparisons: &[TuneComparison],
    pick: &TunePoint,
    family: &str,
    failed: &[usize],
) -> Option<Inference> {
    if pick.phase == TunePhase::Confirm {
        return None;
    }
    let reference = comparisons
        .iter()
        .rev()
        .find(|c| c.family == family)?
        .reference;
    let compared: Vec<&TuneComparison> = comparisons
        .iter()
        .filter(|c| c.family == family && c.reference == reference)
        .collect();
    let v = pool_search::verdicts(&compared, failed)
        .into_iter()
        .find(|v| v.pool_size == pick.pool_size && pick.pool_size < reference)?;
    Some(Inference {
        id: InferenceId::PickNearLine,
        text: format!(
            "pool:{n} is answered unconfirmed: no smaller pool was confirmed within 5% of {family}:{reference} (the budget ran out, or the confirmation read them lower), and pool:{n} is the largest whose rounds read within 2% of the line or above it; {reference} connections carry the load too, at up to {extra} more",
            n = pick.pool_size,
            extra = reference - pick.pool_size,
        ),
        evidence: format!(
            "pool:{} {:.3}× of {family}:{reference} over {} rounds (the line 0.950×; within 2% of it from 0.931×)",
            v.pool_size, v.ratio, v.rounds
        ),
    })
}
