//! PostgreSQL targets as libpq users write them: keyword DSNs
//! (`host=… port=… dbname=… user=…`) besides URLs, the `PGHOST`,
//! `PGPORT`, `PGUSER`, `PGPASSWORD` and `PGDATABASE` variables for what the
//! target leaves out, and the password file (`PGPASSFILE`, else
//! `~/.pgpass`) when no password is given at all.
use poolbench_model::conninfo::{dsn_value, is_dsn};
use std::path::PathBuf;
use tokio_postgres::Config;

/// Host and port of a DSN, from `PGHOST` and `PGPORT` where it has none.
pub(crate) fn dsn_authority(dsn: &str) -> String {
    let host = dsn_value(dsn, "hostaddr")
        .or_else(|| dsn_value(dsn, "host"))
        .or_else(|| env("PGHOST"))
        .unwrap_or_else(|| "localhost".into());
    let port = dsn_value(dsn, "port")
        .or_else(|| env("PGPORT"))
        .unwrap_or_else(|| "5432".into());
    format!("{host}:{port}")
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `DIR:PORT` when the target's server is reached by a Unix-domain socket
/// (a host that is a directory: `host=/var/run/postgresql`,
/// `postgresql:///db?host=/tmp`, `postgresql://%2Ftmp/db`, or no host and
/// such a `PGHOST`).
pub(crate) fn unix_authority(target: &str) -> Option<String> {
    use tokio_postgres::config::Host;
    let rest = take_ssl(target).ok()?.rest;
    let config: Config = rest.parse().ok()?;
    let dir = match config.get_hosts().first() {
        Some(Host::Unix(dir)) => dir.display().to_string(),
        Some(Host::Tcp(_)) => return None,
        None => env("PGHOST").filter(|h| h.starts_with('/'))?,
    };
    let port = match config.get_ports().first() {
        Some(p) => p.to_string(),
        None => env("PGPORT").unwrap_or_else(|| "5432".into()),
    };
    Some(format!("{dir}:{port}"))
}

/// A target with its TLS settings taken out (tokio-postgres knows neither
/// `verify-ca`/`verify-full` nor `sslrootcert`; poolbench does TLS itself).
pub(crate) struct SslOptions {
    /// The URL or DSN without `sslmode` and `sslrootcert`.
    pub rest: String,
    pub mode: Option<String>,
    pub rootcert: Option<String>,
    /// `sslcert` and `sslkey`: the client certificate and its key.
    pub cert: Option<String>,
    pub key: Option<String>,
}

/// Takes `sslmode` and `sslrootcert` out of a URL's query or a DSN.
pub(crate) fn take_ssl(target: &str) -> Result<SslOptions, String> {
    let mut mode = None;
    let (mut rootcert, mut cert, mut key) = (None, None, None);
    let mut take = |k: &str, value: String| match k {
        "sslmode" => mode = Some(value),
        "sslrootcert" => rootcert = Some(value),
        "sslcert" => cert = Some(value),
        "sslkey" => key = Some(value),
        _ => {}
    };
    let ssl_key = |k: &str| matches!(k, "sslmode" | "sslrootcert" | "sslcert" | "sslkey");
    let rest = if is_dsn(target) {
        let mut kept = Vec::new();
        for (k, v) in dsn_pairs(target)? {
            match ssl_key(&k) {
                true => take(&k, v),
                false => kept.push(format!(
                    "{k}='{}'",
                    v.replace('\\', "\\\\").replace('\'', "\\'")
                )),
            }
        }
        kept.join(" ")
    } else {
        match target.split_once('?') {
            None => target.to_string(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    match ssl_key(k) {
                        true => take(k, v.to_string()),
                        false => kept.push(pair),
                    }
                }
                match kept.is_empty() {
                    true => base.to_string(),
                    false => format!("{base}?{}", kept.join("&")),
                }
            }
        }
    };
    Ok(SslOptions {
        rest,
        mode,
        rootcert,
        cert,
        key,
    })
}

/// Every `key=value` of a DSN, unquoted (`\'` and `\\` escapes inside
/// quotes).
fn dsn_pairs(dsn: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = dsn.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("unterminated quote in DSN after {key}=")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(c);
            }
        }
        pairs.push((key.trim().to_string(), value));
    }
}

/// Fill what the target left out from the environment, as libpq does: the
/// user (`PGUSER`, else the login name), the database (`PGDATABASE`, else
/// the user), the password (`PGPASSWORD`, else `POOLBENCH_PASSWORD`, else
/// the password file's first matching line).
pub(crate) fn complete(config: &mut Config, host: &str, port: u16) {
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER").or_else(|| env("USER")) {
            config.user(user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE").or_else(|| config.get_user().map(str::to_string)) {
            config.dbname(db);
        }
    }
    if config.get_password().is_none() {
        let user = config.get_user().unwrap_or("").to_string();
        let db = config.get_dbname().unwrap_or("").to_string();
        let from_file = || password_file(host, port, &db, &user);
        let password = env("PGPASSWORD")
            .or_else(|| env("POOLBENCH_PASSWORD"))
            .or_else(from_file);
        if let Some(password) = password {
            config.password(password);
        }
    }
}

/// The password file's password for this connection: lines
/// `host:port:database:user:password`, `*` matching anything, `\:` and
/// `\\` escaped, the first match winning (as libpq reads `~/.pgpass`).
fn password_file(host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let path = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let port = port.to_string();
    let wanted = [host, port.as_str(), db, user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_escaped(line);
            let [h, p, d, u, password] = fields.as_slice() else {
                return None;
            };
            let matches = [h, p, d, u]
                .iter()
                .zip(wanted)
                .all(|(f, w)| f.as_str() == "*" || f.as_str() == w);
            matches.then(|| password.clone())
        })
}

fn split_escaped(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field").push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use poolbench_model::conninfo::redact_dsn;

    #[test]
    fn dsns_are_told_from_urls_and_read_with_quotes() {
        let dsn = "host=127.0.0.1 port=5433 dbname='my db' user=u password=s3cret";
        assert!(is_dsn(dsn));
        assert!(!is_dsn("postgres://u@h/db"));
        assert!(!is_dsn("localhost:5432"));
        assert_eq!(dsn_value(dsn, "dbname").as_deref(), Some("my db"));
        assert_eq!(dsn_value(dsn, "port").as_deref(), Some("5433"));
        assert_eq!(dsn_authority(dsn), "127.0.0.1:5433");
        assert_eq!(
            redact_dsn(dsn),
            "host=127.0.0.1 port=5433 dbname='my db' user=u password=***"
        );
    }

    #[test]
    fn ssl_settings_are_taken_out_of_urls_and_dsns() {
        let u =
            take_ssl("postgres://u@h/db?sslmode=verify-full&application_name=x&sslrootcert=/c.pem")
                .unwrap();
        assert_eq!(u.rest, "postgres://u@h/db?application_name=x");
        assert_eq!(u.mode.as_deref(), Some("verify-full"));
        assert_eq!(u.rootcert.as_deref(), Some("/c.pem"));
        let d = take_ssl("host=h sslmode=require dbname='my db' password='a\\'b'").unwrap();
        assert_eq!(d.rest, "host='h' dbname='my db' password='a\\'b'");
        assert_eq!(d.mode.as_deref(), Some("require"));
        let plain = take_ssl("postgres://h/db").unwrap();
        assert_eq!((plain.rest.as_str(), plain.mode), ("postgres://h/db", None));
    }

    #[test]
    fn password_file_lines_match_with_wildcards_and_escapes() {
        assert_eq!(
            split_escaped(r"h:5432:db:u:pa\:ss\\"),
            vec!["h", "5432", "db", "u", r"pa:ss\"]
        );
    }
}
