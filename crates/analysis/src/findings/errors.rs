//! `errors`: requests failed, by kind, and when (from the cell's timeline,
//! its first run): a fault that came and went shows as the stretch it
//! lasted, one that did not as "throughout".
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::Errors,
    title: "requests failed",
    find,
};

/// A stretch of errors covering more than this share of the measurement
/// is "throughout".
const THROUGHOUT: f64 = 0.8;

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| c.errors.total > 0)
        .map(|c| {
            let kinds: Vec<String> = c
                .errors
                .by_kind
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let when = match error_span(c) {
                Some((from, to)) => {
                    format!(", from {from:.1} s to {to:.1} s of the measurement (its timeline)")
                }
                None => String::new(),
            };
            Evidence::cell(
                c,
                format!(
                    "{:.2}% errors ({}){when}",
                    c.error_rate() * 100.0,
                    kinds.join(", ")
                ),
            )
        })
        .collect()
}

/// The first and last second of the measurement with an error, when they
/// lie within less than 80% of it: the errors came and went.
fn error_span(c: &CellResult) -> Option<(f64, f64)> {
    let t = &c.timeline;
    let from = t.measure_from_bucket;
    let errors = t.errors.get(from..)?;
    let first = errors.iter().position(|&n| n > 0)?;
    let last = errors.iter().rposition(|&n| n > 0)?;
    let bucket = t.bucket_ms as f64 / 1000.0;
    let (a, b) = (first as f64 * bucket, (last + 1) as f64 * bucket);
    // The timeline is the first run's; the duration sums the runs.
    let window = c.duration_s / c.reps.max(1) as f64;
    (b - a < THROUGHOUT * window).then_some((a, b))
}
