//! What the search asks the server before any load, and how much of the
//! budget it may take (the asking: `searcher/probes.rs`).
use std::time::Duration;

/// The probes to make before the search.
#[derive(Clone, Debug, Default)]
pub struct Probes {
    /// Read the server's own connection limit into the result's fleet
    /// (with `--replicas`; an unreachable server stops the search).
    pub server_limit: bool,
    /// Check that the server answers pipelined requests, each answer
    /// waited for up to this long (asked for with `-s pipeline` and a
    /// closed loop); a server that does not has the family skipped.
    pub pipeline: Option<Duration>,
    /// Learn the server's idle close.
    pub idle: Option<IdleLook>,
}

/// How the idle close is learned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdleLook {
    /// Where the server's settings say nothing, measure on idle
    /// connections with gaps up to this long (`None`: read only).
    pub measure_up_to: Option<Duration>,
}

/// Share of the budget the idle look may take.
pub const IDLE_SHARE: f64 = 0.25;

/// Requests the pipelining probe writes ahead: the depth the search uses
/// at the client's load on two connections, at most 16 (a server that
/// answers 16 in order answers more).
pub fn pipeline_depth(in_flight: usize) -> usize {
    in_flight.div_ceil(2).clamp(2, 16)
}
