//! libpq keyword DSNs (`host=… port=… dbname=… user=…`) as text: told
//! from URLs, read key by key, printed without their password.

/// Keywords a DSN may start with; anything else is not taken for one.
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "connect_timeout",
    "application_name",
    "options",
];

/// Is `text` a keyword DSN (`host=… dbname=…`) rather than a URL?
pub fn is_dsn(text: &str) -> bool {
    !text.contains("://")
        && text.split_whitespace().next().is_some_and(|first| {
            first
                .split_once('=')
                .is_some_and(|(k, _)| KEYWORDS.contains(&k.trim()))
        })
}

/// The value of `key` in a DSN, unquoted (`key=value` or `key='va lue'`).
pub fn dsn_value(dsn: &str, key: &str) -> Option<String> {
    let mut rest = dsn.trim_start();
    while !rest.is_empty() {
        let (k, after) = rest.split_once('=')?;
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('\'') {
            let end = quoted.find('\'').unwrap_or(quoted.len());
            (&quoted[..end], quoted.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if k.trim() == key {
            return Some(value.to_string());
        }
        rest = next.trim_start();
    }
    None
}

/// The DSN with its password replaced by `***`.
pub fn redact_dsn(dsn: &str) -> String {
    match dsn_value(dsn, "password") {
        Some(p) if !p.is_empty() => dsn
            .replace(&format!("password='{p}'"), "password=***")
            .replace(&format!("password={p}"), "password=***"),
        _ => dsn.to_string(),
    }
}
