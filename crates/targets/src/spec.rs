use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use thiserror::Error;

/// A target as the user named it, parsed and resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetSpec {
    /// The URL as given.
    pub url: String,
    /// One of [`SCHEMES`].
    pub scheme: String,
    /// Host and port as written, sent as the Host header.
    pub authority: String,
    /// Path and query sent with each request.
    pub path: String,
}

/// A target that cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TargetError {
    /// Not a URL.
    #[error("invalid target URL \"{0}\": {1}")]
    Invalid(String, String),
    /// A scheme poolbench does not drive.
    #[error(
        "unsupported scheme \"{scheme}\" in \"{url}\": expected one of {}",
        expected()
    )]
    Scheme { url: String, scheme: String },
    /// The host name does not resolve.
    #[error("cannot resolve \"{0}\": {1}")]
    Resolve(String, String),
    /// The protocol options cannot be used (an unreadable --cacert, ...).
    #[error("{0}")]
    Setup(String),
}

/// The schemes poolbench drives, with the port each implies.
pub const SCHEMES: &[(&str, u16)] = &[
    ("http", 80),
    ("h2c", 80),
    ("https", 443),
    ("grpc", 80),
    ("grpcs", 443),
    ("postgres", 5432),
    ("postgresql", 5432),
    ("redis", 6379),
    ("rediss", 6379),
];

fn expected() -> String {
    SCHEMES
        .iter()
        .map(|(s, _)| format!("{s}://"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for TargetSpec {
    type Err = TargetError;

    fn from_str(url: &str) -> Result<Self, TargetError> {
        let pg_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
        if pg_url || crate::postgres::libpq::is_dsn(url) {
            if let Some(authority) = crate::postgres::libpq::unix_authority(url) {
                return Ok(TargetSpec {
                    url: url.to_string(),
                    scheme: "postgres".into(),
                    authority,
                    path: "/".into(),
                });
            }
        }
        if crate::postgres::libpq::is_dsn(url) {
            // A libpq keyword DSN: PostgreSQL, host and port from it or
            // from PGHOST and PGPORT.
            return Ok(TargetSpec {
                url: url.to_string(),
                scheme: "postgres".into(),
                authority: crate::postgres::libpq::dsn_authority(url),
                path: "/".into(),
            });
        }
        let invalid = |why: &str| TargetError::Invalid(url.to_string(), why.to_string());
        let uri: http::Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| invalid(&e.to_string()))?;
        let scheme = uri
            .scheme_str()
            .ok_or_else(|| invalid("no scheme, e.g. http://"))?;
        let Some(&(_, default_port)) = SCHEMES.iter().find(|(s, _)| *s == scheme) else {
            return Err(TargetError::Scheme {
                url: url.to_string(),
                scheme: scheme.to_string(),
            });
        };
        let auth = uri.authority().ok_or_else(|| invalid("no host"))?;
        if auth.host().is_empty() {
            return Err(invalid("no host"));
        }
        // After any user:password@, a `:port` that is not a u16 (65536):
        // the URI parser reads it as no port at all.
        let host_port = auth.as_str().rsplit('@').next().unwrap_or("");
        let port_given = !host_port.ends_with(']') && host_port.contains(':');
        if port_given && auth.port_u16().is_none() {
            return Err(invalid("the port is not a number from 1 to 65535"));
        }
        // Without any user:password@ (PostgreSQL and Redis URLs carry one).
        let authority = format!(
            "{}:{}",
            auth.host(),
            auth.port_u16().unwrap_or(default_port)
        );
        let path = uri
            .path_and_query()
            .map(|p| p.as_str())
            .filter(|p| !p.is_empty())
            .unwrap_or("/")
            .to_string();
        Ok(TargetSpec {
            url: url.to_string(),
            scheme: scheme.to_string(),
            authority,
            path,
        })
    }
}

impl TargetSpec {
    /// An `http://` target at a socket address.
    pub fn http(addr: SocketAddr, path: &str) -> TargetSpec {
        format!("http://{addr}{path}")
            .parse()
            .expect("a socket address makes a valid URL")
    }

    /// The URL with any password replaced by `***`, for messages and reports.
    pub fn redacted(&self) -> String {
        if crate::postgres::libpq::is_dsn(&self.url) {
            return crate::postgres::libpq::redact_dsn(&self.url);
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

    /// Resolve the host to one socket address (the first the resolver
    /// gives). A PostgreSQL server on a Unix-domain socket (`/dir:port`)
    /// gives a loopback address with its port, never connected to.
    pub fn resolve(&self) -> Result<SocketAddr, TargetError> {
        use std::net::ToSocketAddrs;
        let err = |why: String| TargetError::Resolve(self.authority.clone(), why);
        if let Some((dir, port)) = self.authority.rsplit_once(':') {
            if dir.starts_with('/') {
                let port = port.parse().map_err(|_| err("invalid port".into()))?;
                return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
            }
        }
        match self.authority.to_socket_addrs() {
            Ok(mut addrs) => addrs.next().ok_or_else(|| err("no addresses".into())),
            Err(e) => Err(err(e.to_string())),
        }
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

#[cfg(test)]
mod tests {
    use super::TargetSpec;

    #[test]
    fn database_urls_resolve_without_their_credentials_and_print_without_the_password() {
        let pg: TargetSpec = "postgres://u:secret@127.0.0.1:5433/db".parse().unwrap();
        assert_eq!(pg.authority, "127.0.0.1:5433");
        assert_eq!(pg.redacted(), "postgres://u:***@127.0.0.1:5433/db");
        let default_port: TargetSpec = "postgresql://u@localhost/db".parse().unwrap();
        assert_eq!(default_port.authority, "localhost:5432");
        assert_eq!(default_port.redacted(), "postgresql://u@localhost/db");
        let unix: TargetSpec = "postgresql:///db?host=/tmp&port=5439".parse().unwrap();
        assert_eq!(unix.authority, "/tmp:5439");
        assert_eq!(unix.resolve().unwrap().port(), 5439);
        let dsn: TargetSpec = "host=/var/run/postgresql dbname=x".parse().unwrap();
        assert_eq!(dsn.authority, "/var/run/postgresql:5432");
        assert!("http://127.0.0.1:65536/".parse::<TargetSpec>().is_err());
        let with_password: TargetSpec = "redis://:pw@127.0.0.1/".parse().unwrap();
        assert_eq!(with_password.authority, "127.0.0.1:6379");
        let v6: TargetSpec = "http://[::1]/".parse().unwrap();
        assert_eq!(v6.authority, "[::1]:80");
        let redis: TargetSpec = "redis://127.0.0.1/".parse().unwrap();
        assert_eq!(redis.authority, "127.0.0.1:6379");
        assert_eq!(redis.redacted(), "redis://127.0.0.1/");
    }
}
