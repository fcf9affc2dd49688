//! `client-hidden-cap` (`serve --check-client`): requests in flight pinned
//! at a number the user did not ask for, most often a library's default
//! limit (aiohttp's and httpx's 100, hackney's and Finch's 50, OkHttp's 5
//! per host): the rest queue inside the client, unseen.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::ClientWatch;

pub(crate) const CHECK: Check = Check {
    id: Id::ClientHiddenCap,
    title: "the client's requests in flight are pinned at a limit nobody set",
    find,
};

/// Least share of the busy time at the peak that makes it pinned (the
/// rest is the ramps up and down between waves of requests).
pub const PINNED_SHARE: f64 = 0.3;
/// Least busy time to judge by, seconds.
pub const MIN_BUSY_S: f64 = 0.3;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// The count in flight the watch shows pinned, if it does: never
/// exceeded, and held a good share of the busy time.
pub fn pinned(w: &ClientWatch) -> Option<u64> {
    (w.in_flight_peak >= 2 && w.in_flight_peak_share >= PINNED_SHARE && w.busy_s >= MIN_BUSY_S)
        .then_some(w.in_flight_peak)
}
