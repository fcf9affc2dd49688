//! Two saved tunes compared, as a CI capacity gate: the change of each
//! capacity figure (peak, knee, serves at once, cliff) and of the pick
//! (its pool size, throughput and p99), each judged against its interval
//! (`tune_figures.rs`), and what the change means in words
//! (`tune_words.rs`).
use crate::figures::FigureComparison;
use crate::tune_figures::tune_figures;
use crate::tune_words::{notes, summary};
use poolbench_model::TuneResult;

/// `before` against `after`: the figures, and what they mean.
pub fn compare_tunes(before: &TuneResult, after: &TuneResult) -> FigureComparison {
    let figures = tune_figures(before, after);
    FigureComparison {
        kind: "tune".to_string(),
        base: before.target.clone(),
        new: after.target.clone(),
        summary: summary(before, after, &figures),
        notes: notes(before, after),
        figures,
    }
}
