//! A target as the user named it: the URL, its scheme, the host and port,
//! the path. Parsing a target (which knows PostgreSQL's socket directories
//! and DSNs) is the targets crate's `parse_target`.
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;

/// A target as the user named it, parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetSpec {
    /// The URL as given.
    pub url: String,
    /// As written in the URL: one of [`crate::Scheme::WRITTEN`]
    /// ([`TargetSpec::protocol`] reads it).
    pub scheme: String,
    /// Host and port as written, sent as the Host header.
    pub authority: String,
    /// Path and query sent with each request.
    pub path: String,
}

impl TargetSpec {
    /// The protocol, from the scheme as written (a parsed target's
    /// is always one of [`crate::Scheme::WRITTEN`]; `http` otherwise).
    pub fn protocol(&self) -> crate::Scheme {
        crate::Scheme::of(&self.scheme).unwrap_or(crate::Scheme::Http)
    }

    /// An `http://` target at a socket address.
    pub fn http(addr: SocketAddr, path: &str) -> TargetSpec {
        TargetSpec {
            url: format!("http://{addr}{path}"),
            scheme: "http".into(),
            authority: addr.to_string(),
            path: path.to_string(),
        }
    }

    /// The URL with any password replaced by `***`, for messages and reports.
    pub fn redacted(&self) -> String {
        if crate::conninfo::is_dsn(&self.url) {
            return crate::conninfo::redact_dsn(&self.url);
        }
        let Some((scheme, rest)) = self.url.split_once("://") else {
            return self.url.clone();
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        match rest[..end].rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}{}", &rest[end..]),
                None => self.url.clone(),
            },
            None => self.url.clone(),
        }
    }

    /// The same target with its URL's password replaced by `***`.
    pub fn redacted_spec(&self) -> TargetSpec {
        TargetSpec {
            url: self.redacted(),
            ..self.clone()
        }
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}
