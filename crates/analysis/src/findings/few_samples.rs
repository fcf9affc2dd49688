//! `few-samples`: a figure from fewer than three samples has no confidence
//! interval.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::FewSamples,
    title:
        "fewer than 3 samples (or zero deviation): no confidence interval; use --reps 3 or --batch",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| c.samples.len() < 3 || c.throughput_ci95 == Some(0.0))
        .map(|c| Evidence::cell(c, format!("{} sample(s)", c.samples.len())))
        .collect()
}
