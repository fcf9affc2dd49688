//! `client-idle-race` (`serve --check-client`): the client keeps
//! connections idle longer than the server does, and came back after the
//! server had closed them: a request sent as the server closes meets a
//! reset, which clients surface as a failed request or retry.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::ClientWatch;

pub(crate) const CHECK: Check = Check {
    id: Id::ClientIdleRace,
    title: "the client keeps connections idle past the server's keep-alive",
    find,
};

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether the watch shows the race: connections the server closed for
/// idleness and requests after, or reuses at the edge of the timeout.
pub fn races(w: &ClientWatch) -> bool {
    w.keepalive_timeout_s.is_some()
        && ((w.ended_by.server_idle > 0 && w.requests_after_idle_close > 0) || w.late_reuses > 0)
}
