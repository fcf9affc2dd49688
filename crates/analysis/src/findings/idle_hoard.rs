//! `idle-hoard`: many connections held idle for a long time, taking slots
//! of the server's limit that others could use (`poolbench census`;
//! "long" is `--idle-after`, 60 s unless told).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::IdleHoard,
    title: "many connections held idle for long, taking the server's slots",
    find,
};

/// Fewest long-idle connections that make a hoard.
pub const MIN_IDLE: u64 = 5;
/// Least share of the server's usable connections (of those held, where
/// the limit is unknown) they must take.
pub const SHARE: f64 = 0.1;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether `idle_long` connections idle past the threshold, of `of`
/// (the usable limit, else those held), are a hoard.
pub fn hoard(idle_long: u64, of: u64) -> bool {
    idle_long >= MIN_IDLE && idle_long as f64 >= SHARE * of as f64
}
