//! A `mysql://` (or `mariadb://`) URL as `mysql_async` options: the
//! `ssl-mode` of the MySQL clients (`DISABLED`, `PREFERRED`, `REQUIRED`,
//! `VERIFY_CA`, `VERIFY_IDENTITY`) and `ssl-ca` read here, the rest by
//! `mysql_async`; the password from the URL, else `MYSQL_PWD`, else
//! `POOLBENCH_PASSWORD`.
use mysql_async::{ClientIdentity, Opts, OptsBuilder, SslOpts};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// How the server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// No TLS (`DISABLED`; also `PREFERRED`: `mysql_async` cannot fall
    /// back from TLS, so the default stays plain, as its own).
    Disabled,
    /// TLS, any certificate.
    Required,
    /// TLS, a certificate signed by a trusted CA, any name.
    VerifyCa,
    /// TLS, a trusted certificate for the host's name.
    VerifyIdentity,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, String> {
        match value.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" | "PREFERRED" => Ok(SslMode::Disabled),
            "REQUIRED" => Ok(SslMode::Required),
            "VERIFY_CA" => Ok(SslMode::VerifyCa),
            "VERIFY_IDENTITY" => Ok(SslMode::VerifyIdentity),
            _ => Err(format!(
                "ssl-mode={value}: expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
            )),
        }
    }
}

/// The URL's own TLS settings, and the URL without them.
struct Split {
    mode: Option<SslMode>,
    ca: Option<PathBuf>,
    rest: String,
}

fn split(url: &str) -> Result<Split, String> {
    let url = match url.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => url.to_string(),
    };
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b.to_string(), q),
        None => (url.clone(), ""),
    };
    let (mut mode, mut ca, mut kept) = (None, None, Vec::new());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key.to_ascii_lowercase().replace('_', "-").as_str() {
            "ssl-mode" | "sslmode" => mode = Some(SslMode::parse(value)?),
            "ssl-ca" => ca = Some(PathBuf::from(value)),
            _ => kept.push(pair),
        }
    }
    let rest = match kept.is_empty() {
        true => base,
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok(Split { mode, ca, rest })
}

/// The options to connect to the server of `url` at `addr`, trusting
/// `cacert` (or the URL's `ssl-ca`) for the verifying modes.
pub(crate) fn options(url: &str, addr: SocketAddr, cacert: Option<&Path>) -> Result<Opts, String> {
    let split = split(url)?;
    let opts = Opts::from_url(&split.rest).map_err(|e| format!("invalid MySQL URL: {e}"))?;
    let pass = opts
        .pass()
        .map(str::to_string)
        .or_else(|| std::env::var("MYSQL_PWD").ok())
        .or_else(|| std::env::var("POOLBENCH_PASSWORD").ok());
    let ca = split.ca.or_else(|| cacert.map(Path::to_path_buf));
    let ssl = match split.mode.unwrap_or(SslMode::Disabled) {
        SslMode::Disabled => None,
        mode => Some(ssl_opts(mode, ca)?),
    };
    let builder = OptsBuilder::from_opts(opts)
        .pass(pass)
        .tcp_port(addr.port())
        .resolved_ips(Some(vec![addr.ip()]))
        .prefer_socket(false)
        .ssl_opts(ssl);
    Ok(builder.into())
}

/// `opts` whose sessions present the client certificate `client`.
pub(crate) fn with_client_identity(
    opts: Opts,
    client: Option<(&Path, &Path)>,
) -> Result<Opts, String> {
    let Some((cert, key)) = client else {
        return Ok(opts);
    };
    let Some(ssl) = opts.ssl_opts().cloned() else {
        return Err(
            "--cert and --key need TLS: add ssl-mode=REQUIRED, VERIFY_CA or VERIFY_IDENTITY to the URL"
                .to_string(),
        );
    };
    let identity = ClientIdentity::new(cert.to_path_buf().into(), key.to_path_buf().into());
    let ssl = ssl.with_client_identity(Some(identity));
    Ok(OptsBuilder::from_opts(opts).ssl_opts(ssl).into())
}

fn ssl_opts(mode: SslMode, ca: Option<PathBuf>) -> Result<SslOpts, String> {
    let mut ssl = SslOpts::default();
    if let Some(ca) = ca {
        if !ca.is_file() {
            return Err(format!("cannot read the CA file {}", ca.display()));
        }
        ssl = ssl.with_root_certs(vec![ca.into()]);
    }
    Ok(match mode {
        SslMode::Required => ssl
            .with_danger_accept_invalid_certs(true)
            .with_danger_skip_domain_validation(true),
        SslMode::VerifyCa => ssl.with_danger_skip_domain_validation(true),
        _ => ssl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssl_mode_is_read_and_the_rest_left_to_mysql_async() {
        let s = split("mariadb://u:p@h:1/db?ssl-mode=verify_identity&pool_max=3").unwrap();
        assert_eq!(s.mode, Some(SslMode::VerifyIdentity));
        assert_eq!(s.rest, "mysql://u:p@h:1/db?pool_max=3");
        let s = split("mysql://h/db?ssl_mode=REQUIRED&ssl-ca=/x.pem").unwrap();
        assert_eq!(
            (s.mode, s.ca),
            (Some(SslMode::Required), Some("/x.pem".into()))
        );
        assert_eq!(s.rest, "mysql://h/db");
        assert!(split("mysql://h/db?ssl-mode=sometimes").is_err());
        let addr = "127.0.0.1:3307".parse().unwrap();
        let o = options("mysql://u:secret@localhost/db", addr, None).unwrap();
        assert_eq!(
            (o.tcp_port(), o.pass(), o.db_name()),
            (3307, Some("secret"), Some("db"))
        );
        assert!(options("mysql://h/db?nonsense=1", addr, None).is_err());
    }
}
