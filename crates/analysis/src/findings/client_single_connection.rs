//! `client-single-connection` (`serve --check-client`): every HTTP/2
//! request (gRPC included) on one connection while the server's streams
//! limit is reached: the requests past the limit wait in the client.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::ClientWatch;

pub(crate) const CHECK: Check = Check {
    id: Id::ClientSingleConnection,
    title: "everything on one HTTP/2 connection while the server caps its streams",
    find,
};

/// Least share of the busy time at the streams limit.
pub const AT_LIMIT_SHARE: f64 = 0.25;

fn find(_: &Run) -> Vec<Evidence> {
    Vec::new()
}

/// Whether the watch shows it.
pub fn single(w: &ClientWatch) -> bool {
    w.h2_connections_peak == 1 && w.streams_at_limit_share >= AT_LIMIT_SHARE
}
