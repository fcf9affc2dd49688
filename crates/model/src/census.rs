//! What `poolbench census` saw: the connections a database or pooler
//! holds now, grouped, against its limit. No load.
use crate::findings::Finding;
use crate::fleet::ServerLimit;
use serde::{Deserialize, Serialize};

/// One connection as the server lists it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeenConnection {
    /// `client` (a client's connection) or `server` (a pooler's own
    /// connection to the database).
    pub side: String,
    /// The client's address, without its port (`local`: a Unix socket).
    pub client: String,
    pub user: String,
    /// `application_name` (PostgreSQL, PgBouncer) or the client's name
    /// (Redis); empty where there is none.
    pub application: String,
    /// `active`, `idle`, `idle in transaction`, `waiting`, …
    pub state: String,
    /// Seconds since its last request (or state change), where known.
    pub idle_s: Option<f64>,
}

/// Connections alike: the same side, client, user, application, state and
/// idle-age band.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CensusGroup {
    pub side: String,
    pub client: String,
    pub user: String,
    pub application: String,
    pub state: String,
    /// `<10s`, `10s-60s`, `1-10min`, `>10min` or `unknown`.
    pub idle_band: String,
    pub count: u64,
    /// The longest idle time in the group, seconds.
    pub oldest_idle_s: Option<f64>,
}

/// Everything one census saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Census {
    /// The target (no password).
    pub target: String,
    /// When it was taken (RFC 3339, UTC).
    pub taken_at: String,
    /// The server's limit, as read (`connections` left for a new client).
    pub limit: ServerLimit,
    /// Client connections held, the census's own left out.
    pub held: u64,
    /// Client connections idle longer than `idle_after_s`.
    pub idle_long: u64,
    pub idle_after_s: f64,
    pub groups: Vec<CensusGroup>,
    /// `near-connection-limit`, `idle-hoard`.
    pub findings: Vec<Finding>,
    /// What the listing could not see (no privilege), in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Seconds from `timestamp` (UTC, `2024-05-01 10:00:00` with or without
/// ` UTC`, as PgBouncer writes it) to now; `None` when it is not one.
pub fn seconds_since(timestamp: &str) -> Option<f64> {
    let t = timestamp
        .trim()
        .trim_end_matches(" UTC")
        .trim_end_matches('Z');
    let t = t.split('.').next()?;
    let at = humantime::parse_rfc3339_weak(t).ok()?;
    let age = std::time::SystemTime::now().duration_since(at).ok()?;
    Some(age.as_secs_f64())
}

/// What a server said about its connections, read without load: its
/// limit, each connection it listed, and what it would not show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Survey {
    pub limit: ServerLimit,
    pub seen: Vec<SeenConnection>,
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn pgbouncer_timestamps_give_an_age() {
        let age = super::seconds_since("2020-01-01 00:00:00 UTC").unwrap();
        assert!(age > 1e8);
        assert!(super::seconds_since("").is_none());
    }
}
