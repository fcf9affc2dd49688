//! `errors`: requests failed, by kind.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::Errors,
    title: "requests failed",
    find,
};

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
            Evidence::cell(
                c,
                format!(
                    "{:.2}% errors ({})",
                    c.error_rate() * 100.0,
                    kinds.join(", ")
                ),
            )
        })
        .collect()
}
