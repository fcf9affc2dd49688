//! `near-connection-limit` (`over-budget` before): a database or pooler
//! already holds most of the connections it allows (`poolbench census`). A run opens its own: the
//! census finds it (`census.rs`).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::NearConnectionLimit,
    title: "the server already holds most of the connections it allows",
    find,
};

/// Share of the usable connections held from which the server is near
/// its limit: one more deploy's surge, or a replica restarting, runs out.
pub const SHARE: f64 = 0.9;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether `held` of `usable` connections is near the limit.
pub fn over(held: u64, usable: u64) -> bool {
    usable > 0 && held as f64 >= SHARE * usable as f64
}
