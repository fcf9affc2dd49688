//! `client-churn` (`serve --check-client`): a new connection for most
//! requests: no keep-alive, or an idle cap below the client's concurrency
//! (Go's `http.Transport` keeps 2 idle per host), so connections open and
//! close until the ephemeral ports run out.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::ClientWatch;

pub(crate) const CHECK: Check = Check {
    id: Id::ClientChurn,
    title: "the client opens a new connection for most requests",
    find,
};

/// Fewest requests to judge by.
pub const MIN_REQUESTS: u64 = 20;
/// Connections per request from which it is churn.
pub const SHARE: f64 = 0.5;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether the watch shows churn the client caused (most of the
/// connections that ended, the client closed).
pub fn churns(w: &ClientWatch) -> bool {
    let by = &w.ended_by;
    let ended = by.client + by.server_idle + by.server_limit + by.server_stop + by.reset;
    w.requests >= MIN_REQUESTS
        && w.connections_opened as f64 >= SHARE * w.requests as f64
        && (by.client + by.reset) * 2 >= ended
}
