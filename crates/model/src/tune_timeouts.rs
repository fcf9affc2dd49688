//! The pool's timeouts `tune` recommends beside its size: how long to wait
//! for a connection, and how long to keep one idle, from what the server
//! said or was measured to do with idle connections.
use serde::{Deserialize, Serialize};

/// What the server does with an idle connection: read from its settings
/// or measured by holding connections idle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerIdle {
    /// Seconds after which the server closes an idle connection; `None`:
    /// it does not (a setting of 0), or it was not learned (`note` says
    /// why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_close_s: Option<f64>,
    /// Where it came from: the setting (`wait_timeout`,
    /// `idle_session_timeout`, `Keep-Alive: timeout=5`, Redis `timeout`)
    /// or `measured`.
    pub source: String,
    /// Other limits the server puts on a connection, read with it
    /// (PostgreSQL's `idle_in_transaction_session_timeout`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other: Vec<ServerTimeout>,
    /// Measured: the longest idle gap after which a connection still
    /// answered, and the shortest after which the server had closed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<IdleBracket>,
    /// Why nothing was learned, or what was not (a probe that reached its
    /// bound with the connection still open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ServerIdle {
    /// `source` when the server said nothing and nothing was measured.
    pub const NOT_SAID: &'static str = "no Keep-Alive header";
}

/// A named limit, in seconds (0: none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerTimeout {
    pub name: String,
    pub seconds: f64,
}

/// Idle gaps, in seconds: still open after `open_s`, closed after
/// `closed_s` (`None`: open at every gap tried).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleBracket {
    pub open_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_s: Option<f64>,
    /// Idle connections the probe opened.
    pub connections: usize,
}

/// The timeouts recommended with the pool size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PoolTimeouts {
    /// How long a request may wait for a connection before it fails, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_ms: Option<f64>,
    /// What the acquire timeout rests on, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_basis: Option<String>,
    /// The client's idle timeout and max lifetime, s: below the server's
    /// idle close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_s: Option<f64>,
}
