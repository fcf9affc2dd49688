//! Protocol settings a target may need beyond its URL.
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Settings for the target's protocol, from the command line. Every field
/// has a default, so a plan written before a field existed still loads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Every TLS target: resume TLS sessions across the run's connections,
    /// as browsers, Go, Java and curl do. Default on.
    pub tls_resume: TlsResume,
    /// Every TLS target: the client certificate chain (PEM) to present.
    /// Default none.
    pub cert: Option<PathBuf>,
    /// Every TLS target: the private key (PEM) of `cert`. Default none.
    pub key: Option<PathBuf>,
    /// `postgres://`, `mysql://`: the query each request runs, prepared
    /// once per connection. `None`: `SELECT 1`.
    pub query: Option<String>,
    /// `postgres://`, `mysql://`: the values of the query's parameters
    /// (`$1`, `$2`, … or `?`, in order):
    /// `random(A,B)` or text with `{seq}` and `{random:A..B}`.
    pub params: Vec<String>,
    /// `postgres://`, `mysql://`: SQL run once before the run.
    pub setup: Option<String>,
    /// `postgres://`: how each request sends the query (pgbench's `-M`).
    /// `None` on other targets; `prepared` when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_mode: Option<QueryMode>,
    /// `redis://`: the command each request sends, e.g. `GET key`.
    /// `None`: `PING`.
    pub command: Option<String>,
    /// `h2c://`: the h2 crate's client instead of the lean one, to
    /// cross-check its figures. Default false.
    pub h2_crate: bool,
    /// `http://`, `h2c://`, `https://`: the request each worker sends
    /// (`grpc://`, `grpcs://`: its headers, as metadata).
    pub http: HttpRequestOptions,
    /// `grpc://`, `grpcs://`: the method called and its message.
    pub grpc: GrpcOptions,
    /// Every TCP target whose client poolbench dials (not `mysql://`,
    /// `redis://`): the local addresses connections are bound to, round
    /// robin, as given (`127.0.0.2`, `127.0.0.2-127.0.0.9`,
    /// `127.0.1.0/24`; see `expand_sources`). Empty: the kernel picks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source: Vec<String>,
}

/// The gRPC call, as the command line gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GrpcOptions {
    /// `.proto` files describing the method. Empty: the built-in Greeter's,
    /// or the server's reflection.
    pub proto: Vec<PathBuf>,
    /// Where the files' imports are found (besides each file's directory).
    pub import_paths: Vec<PathBuf>,
    /// `package.Service/Method`. `None`: `helloworld.Greeter/SayHello`.
    pub call: Option<String>,
    /// The request message as JSON, with `{seq}` and `{random:A..B}`
    /// placeholders. `None`: `{"name": "poolbench"}` for the Greeter, `{}`
    /// otherwise.
    pub data: Option<String>,
    /// The request message's JSON from a file, read when the target opens.
    pub data_file: Option<PathBuf>,
}

impl GrpcOptions {
    /// Anything other than the default call was asked for.
    pub fn is_set(&self) -> bool {
        *self != GrpcOptions::default()
    }
}

/// The HTTP request, as the command line gives it. Placeholders `{seq}`
/// and `{random:A..B}` may appear in the path, a header value or the body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct HttpRequestOptions {
    /// `None`: GET.
    pub method: Option<String>,
    /// `Name: value` lines, in order.
    pub headers: Vec<String>,
    /// The body as text.
    pub body: Option<String>,
    /// The body from a file, read when the target opens.
    pub body_file: Option<PathBuf>,
    /// Sent as Content-Type.
    pub content_type: Option<String>,
    /// Sent as Host (HTTP/1.1) or :authority (HTTP/2) instead of the URL's.
    pub host: Option<String>,
}

/// Headers whose values are credentials.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
];

impl HttpRequestOptions {
    /// The same, with credential headers' values replaced by `***`, for
    /// results and reports.
    pub fn redacted(&self) -> HttpRequestOptions {
        let mut r = self.clone();
        for h in &mut r.headers {
            if let Some((name, _)) = h.split_once(':') {
                if SECRET_HEADERS
                    .iter()
                    .any(|s| name.trim().eq_ignore_ascii_case(s))
                {
                    *h = format!("{}: ***", name.trim());
                }
            }
        }
        r
    }

    /// Does the request carry a body?
    pub fn has_body(&self) -> bool {
        self.body.is_some() || self.body_file.is_some()
    }
}

impl TargetOptions {
    /// The SQL query (PostgreSQL, MySQL), or its default.
    pub fn query(&self) -> &str {
        self.query.as_deref().unwrap_or("SELECT 1")
    }

    /// Record the query mode a `postgres://` target runs with (its
    /// default when none was given), so the result says which it was.
    pub fn fill_query_mode(&mut self, scheme: &str) {
        if crate::Scheme::of(scheme) == Some(crate::Scheme::Postgres) {
            self.query_mode.get_or_insert(QueryMode::Prepared);
        }
    }

    /// The Redis command, or its default.
    pub fn command(&self) -> &str {
        self.command.as_deref().unwrap_or("PING")
    }
}

/// How a `postgres://` request sends its query, as pgbench's `-M`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    /// The simple query protocol: one Query message, the parameters
    /// inlined as quoted literals.
    Simple,
    /// The extended protocol with the unnamed statement: Parse, Bind,
    /// Execute each time (works through a transaction-pooling proxy).
    Extended,
    /// A named statement prepared once per connection, then Bind and
    /// Execute (the default).
    #[default]
    Prepared,
}

impl QueryMode {
    /// Every mode's name, as `--query-mode` takes it.
    pub const NAMES: &'static str = "simple, extended or prepared";

    /// The mode named `text`.
    pub fn parse(text: &str) -> Result<QueryMode, String> {
        match text {
            "simple" => Ok(QueryMode::Simple),
            "extended" => Ok(QueryMode::Extended),
            "prepared" => Ok(QueryMode::Prepared),
            other => Err(format!(
                "invalid query mode \"{other}\": expected {}",
                QueryMode::NAMES
            )),
        }
    }

    /// Its name, as pgbench spells it.
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// The HTTP version an `https://` target asks the server for by ALPN.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
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

/// Whether TLS connections resume sessions (`--tls-resume on|off`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TlsResume {
    /// One session store per run, shared by its connections: TLS 1.3
    /// tickets, TLS 1.2 session IDs and tickets.
    #[default]
    On,
    /// Every connection pays a full handshake.
    Off,
}
