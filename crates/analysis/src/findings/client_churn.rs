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
/// Or: this many times the most open at once, with at least
/// `SOME_SHARE` connections per request (Go at its defaults, 10
/// goroutines × 30 requests: 140 to 160 connections, 10 at once; one run
/// read 145, below the half).
pub const PEAK_TIMES: u64 = 4;
pub const SOME_SHARE: f64 = 0.25;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether the watch shows churn the client caused: a connection for
/// half the requests or more, or for a quarter and four times as many as
/// were ever open at once; most of the connections that ended, the
/// client closed.
pub fn churns(w: &ClientWatch) -> bool {
    let by = &w.ended_by;
    let ended = by.client + by.server_idle + by.server_limit + by.server_stop + by.reset;
    let opened = w.connections_opened;
    let many = opened as f64 >= SHARE * w.requests as f64
        || (opened >= PEAK_TIMES * w.connections_peak.max(1)
            && opened as f64 >= SOME_SHARE * w.requests as f64);
    w.requests >= MIN_REQUESTS && many && (by.client + by.reset) * 2 >= ended
}
