//! Protocol settings a target may need beyond its URL.
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Settings for the target's protocol, from the command line. Every field
/// has a default, so a plan written before a field existed still loads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetOptions {
    /// `https://`: which HTTP version to ask for by ALPN (default: either,
    /// HTTP/2 preferred).
    pub http_version: HttpVersion,
    /// `https://`, `grpcs://`: accept any server certificate (self-signed
    /// ones included). Default false.
    pub insecure: bool,
    /// `https://`, `grpcs://`: trust the certificates in this PEM file (in
    /// addition to the system's). Default none.
    pub cacert: Option<PathBuf>,
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

/// The HTTP version an `https://` target asks the server for by ALPN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HttpVersion {
    /// Offer `h2` and `http/1.1`; the server picks.
    #[default]
    Auto,
    /// Offer only `http/1.1`.
    Http1,
    /// Offer only `h2`; a server that does not agree is an error.
    Http2,
}
