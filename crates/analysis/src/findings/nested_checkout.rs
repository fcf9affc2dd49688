//! `nested-checkout`: a task holding a connection waited for a second one
//! from the same pool (the handler that deadlocks).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::NestedCheckout,
    title: "a task holding a connection waited for another from the same pool: deadlocks once every holder does",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let refused = c
            .errors
            .by_kind
            .get("nested_checkout")
            .copied()
            .unwrap_or(0);
        if c.pool.nested_waits > 0 || refused > 0 {
            out.push(Evidence::cell(
                c,
                format!(
                    "{} nested waits, {} refused (--fail-on-nested); deadlock-free needs a pool of at least c×(2−1)+1 = {}",
                    c.pool.nested_waits,
                    refused,
                    c.concurrency + 1
                ),
            ));
        }
    }
    out
}
