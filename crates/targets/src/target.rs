//! Targets from what the user typed: URLs of the schemes poolbench drives,
//! PostgreSQL URLs and libpq DSNs (a host that is a socket directory
//! included), and their addresses.
use poolbench_model::{Scheme, TargetSpec};
use std::net::SocketAddr;
use thiserror::Error;

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

fn expected() -> String {
    Scheme::WRITTEN
        .iter()
        .map(|(s, _, _)| format!("{s}://"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `url` as a target: a URL of one of [`Scheme::WRITTEN`], a PostgreSQL URL or
/// libpq keyword DSN (whose host may be a socket directory).
pub fn parse_target(url: &str) -> Result<TargetSpec, TargetError> {
    let pg_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    if pg_url || poolbench_model::conninfo::is_dsn(url) {
        if let Some(authority) = crate::postgres::libpq::unix_authority(url) {
            return Ok(TargetSpec {
                url: url.to_string(),
                scheme: "postgres".into(),
                authority,
                path: "/".into(),
            });
        }
    }
    if poolbench_model::conninfo::is_dsn(url) {
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
    let Some(&(_, _, default_port)) = Scheme::WRITTEN.iter().find(|(s, _, _)| *s == scheme) else {
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

/// Resolve the host to one socket address (the first the resolver
/// gives). A PostgreSQL server on a Unix-domain socket (`/dir:port`)
/// gives a loopback address with its port, never connected to.
pub fn resolve(spec: &TargetSpec) -> Result<SocketAddr, TargetError> {
    use std::net::ToSocketAddrs;
    let err = |why: String| TargetError::Resolve(spec.authority.clone(), why);
    if let Some((dir, port)) = spec.authority.rsplit_once(':') {
        if dir.starts_with('/') {
            let port = port.parse().map_err(|_| err("invalid port".into()))?;
            return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
        }
    }
    match spec.authority.to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or_else(|| err("no addresses".into())),
        Err(e) => Err(err(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_target, resolve};

    #[test]
    fn database_urls_resolve_without_their_credentials_and_print_without_the_password() {
        let pg = parse_target("postgres://u:secret@127.0.0.1:5433/db").unwrap();
        assert_eq!(pg.authority, "127.0.0.1:5433");
        assert_eq!(pg.redacted(), "postgres://u:***@127.0.0.1:5433/db");
        let default_port = parse_target("postgresql://u@localhost/db").unwrap();
        assert_eq!(default_port.authority, "localhost:5432");
        assert_eq!(default_port.redacted(), "postgresql://u@localhost/db");
        let unix = parse_target("postgresql:///db?host=/tmp&port=5439").unwrap();
        assert_eq!(unix.authority, "/tmp:5439");
        assert_eq!(resolve(&unix).unwrap().port(), 5439);
        let dsn = parse_target("host=/var/run/postgresql dbname=x").unwrap();
        assert_eq!(dsn.authority, "/var/run/postgresql:5432");
        assert!(parse_target("http://127.0.0.1:65536/").is_err());
        let with_password = parse_target("redis://:pw@127.0.0.1/").unwrap();
        assert_eq!(with_password.authority, "127.0.0.1:6379");
        let v6 = parse_target("http://[::1]/").unwrap();
        assert_eq!(v6.authority, "[::1]:80");
        let redis = parse_target("redis://127.0.0.1/").unwrap();
        assert_eq!(redis.authority, "127.0.0.1:6379");
        assert_eq!(redis.redacted(), "redis://127.0.0.1/");
        let my = parse_target("mysql://u:secret@127.0.0.1/db?ssl-mode=REQUIRED").unwrap();
        assert_eq!(
            (my.scheme.as_str(), my.authority.as_str()),
            ("mysql", "127.0.0.1:3306")
        );
        assert_eq!(
            my.redacted(),
            "mysql://u:***@127.0.0.1/db?ssl-mode=REQUIRED"
        );
        let maria = parse_target("mariadb://u:pw@localhost:3307/db").unwrap();
        assert_eq!(maria.authority, "localhost:3307");
    }
}
