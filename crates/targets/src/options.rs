//! Protocol settings a target may need beyond its URL.
use serde::{Deserialize, Serialize};

/// Settings for the target's protocol, from the command line. Every field
/// has a default, so a plan written before a field existed still loads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetOptions {
    /// `postgres://`: the query each request runs, prepared once per
    /// connection. `None`: `SELECT 1`.
    pub query: Option<String>,
    /// `postgres://`: SQL run once before the run.
    pub setup: Option<String>,
    /// `redis://`: the command each request sends, e.g. `GET key`.
    /// `None`: `PING`.
    pub command: Option<String>,
}

impl TargetOptions {
    /// The PostgreSQL query, or its default.
    pub fn query(&self) -> &str {
        self.query.as_deref().unwrap_or("SELECT 1")
    }

    /// The Redis command, or its default.
    pub fn command(&self) -> &str {
        self.command.as_deref().unwrap_or("PING")
    }
}
