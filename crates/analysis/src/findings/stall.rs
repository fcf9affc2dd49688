//! `stall`: requests were in flight and none succeeded for a while.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::Stall,
    title: "no request succeeded for a while though requests were in flight: the target froze",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        for s in &c.stalls {
            out.push(Evidence::cell(
                c,
                format!(
                    "nothing succeeded for {:.1} s from {:.1} s into the measurement; {} timeouts",
                    s.duration_s,
                    s.start_s,
                    c.errors.by_kind.get("timeout").copied().unwrap_or(0)
                ),
            ));
        }
    }
    out
}
