//! The request options `run` and `tune` share: what each request sends
//! (HTTP, gRPC, PostgreSQL, Redis) and how TLS and HTTP/2 are spoken.
use clap::{Args, ValueEnum};
use poolbench_model::{QueryMode, TlsResume};
use poolbench_targets::{GrpcOptions, HttpRequestOptions, HttpVersion, TargetOptions};
use std::path::PathBuf;

/// The HTTP/2 client of `h2c://` targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum H2ClientArg {
    Lean,
    H2,
}

/// What each request sends, and how.
#[derive(Args, Debug, Clone)]
pub(crate) struct RequestArgs {
    /// HTTP: the request method. [default: GET]
    #[arg(short, long, help_heading = "HTTP request")]
    pub(crate) method: Option<String>,

    /// HTTP: a header, "Name: value" (repeat for more; gRPC: metadata,
    /// sent as given). Values, the URL's
    /// path and the body may hold {seq} (counts requests from 0) and
    /// {random:A..B} (a fresh integer in A..=B), rendered per request;
    /// without them the request is encoded once.
    #[arg(
        short = 'H',
        long = "header",
        value_name = "NAME: VALUE",
        help_heading = "HTTP request"
    )]
    pub(crate) headers: Vec<String>,

    /// HTTP: the request body (Content-Length is set from it; over HTTP/2
    /// sent as DATA within the server's flow-control windows).
    #[arg(long, conflicts_with = "body_file", help_heading = "HTTP request")]
    pub(crate) body: Option<String>,

    /// HTTP: the request body from a file.
    #[arg(long, value_name = "FILE", help_heading = "HTTP request")]
    pub(crate) body_file: Option<PathBuf>,

    /// HTTP: the Content-Type header.
    #[arg(short = 'T', long, help_heading = "HTTP request")]
    pub(crate) content_type: Option<String>,

    /// HTTP: the Host header (HTTP/2: :authority) instead of the URL's.
    #[arg(long, help_heading = "HTTP request")]
    pub(crate) host: Option<String>,

    /// gRPC: the .proto file describing --call (repeat for more; compiled
    /// at run time). Without it, the built-in Greeter's, or else the
    /// server's reflection.
    #[arg(long, value_name = "FILE", help_heading = "gRPC call")]
    pub(crate) proto: Vec<PathBuf>,

    /// gRPC: where the .proto files' imports are found (repeat for more;
    /// each file's own directory is searched too).
    #[arg(long, value_name = "DIR", help_heading = "gRPC call")]
    pub(crate) import_path: Vec<PathBuf>,

    /// gRPC: the unary method, package.Service/Method.
    /// [default: helloworld.Greeter/SayHello]
    #[arg(long, value_name = "METHOD", help_heading = "gRPC call")]
    pub(crate) call: Option<String>,

    /// gRPC: the request message as JSON (proto3 JSON names); may hold
    /// {seq} and {random:A..B}, then it is encoded per call.
    /// [default: {"name": "poolbench"} for the Greeter, {} otherwise]
    #[arg(
        long,
        value_name = "JSON",
        conflicts_with = "data_file",
        help_heading = "gRPC call"
    )]
    pub(crate) data: Option<String>,

    /// gRPC: the request message's JSON from a file.
    #[arg(long, value_name = "FILE", help_heading = "gRPC call")]
    pub(crate) data_file: Option<PathBuf>,

    /// postgres://, mysql://: the query each request runs, prepared once
    /// per connection. [default: SELECT 1]
    #[arg(long)]
    pub(crate) query: Option<String>,

    /// postgres://, mysql://: the value of the query's next parameter ($1,
    /// $2, … or ?, in order; repeat, one per parameter): random(A,B) as
    /// pgbench's \set, or text with {seq} and {random:A..B}. PostgreSQL
    /// gets it in text format and parses it by the parameter's type; MySQL
    /// gets an integer when it is one, else a string.
    #[arg(long = "param", value_name = "VALUE")]
    pub(crate) params: Vec<String>,

    /// postgres://: how each request sends the query, as pgbench's -M:
    /// simple (the simple query protocol, parameters inlined as quoted
    /// literals), extended (the unnamed statement: Parse, Bind, Execute
    /// each time; works through a transaction-pooling proxy such as
    /// PgBouncer), prepared (a named statement prepared once per
    /// connection). [default: prepared]
    #[arg(long, value_name = "MODE", value_parser = QueryMode::parse)]
    pub(crate) query_mode: Option<QueryMode>,

    /// postgres://, mysql://: SQL run once before the run (e.g. CREATE
    /// TABLE ...; MySQL: several statements separated by ;).
    #[arg(long)]
    pub(crate) setup: Option<String>,

    /// redis://: the command each request sends, e.g. "GET key".
    /// [default: PING]
    #[arg(long)]
    pub(crate) command: Option<String>,

    /// https:// only: offer only HTTP/1.1 by ALPN.
    #[arg(long, conflicts_with = "http2")]
    pub(crate) http1: bool,

    /// https:// only: offer only HTTP/2 by ALPN; a server that does not
    /// agree is an error.
    #[arg(long)]
    pub(crate) http2: bool,

    /// h2c:// only: the HTTP/2 client, poolbench's lean one or the h2
    /// crate's (to cross-check the lean one's figures).
    #[arg(long, value_enum, default_value = "lean")]
    pub(crate) h2_client: H2ClientArg,

    /// https://, grpcs://: accept any server certificate (self-signed ones).
    #[arg(long)]
    pub(crate) insecure: bool,

    /// https://, grpcs://, postgres://, rediss://, mysql://: trust the
    /// certificates in this PEM file (mysql://: with ssl-mode=VERIFY_CA or
    /// VERIFY_IDENTITY in the URL).
    #[arg(long, value_name = "FILE")]
    pub(crate) cacert: Option<PathBuf>,

    /// Every TLS target: resume TLS sessions across the run's connections
    /// (TLS 1.3 tickets, TLS 1.2 session IDs and tickets), as browsers, Go,
    /// Java and curl do; off: every connection pays a full handshake.
    /// Handshakes are counted per cell (full, resumed), except on mysql://,
    /// whose client library does not expose them.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub(crate) tls_resume: String,

    /// Every TLS target (https://, grpcs://, postgres://, rediss://,
    /// mysql:// with ssl-mode): present this client certificate (PEM; with
    /// --key).
    #[arg(long, value_name = "FILE", requires = "key")]
    pub(crate) cert: Option<PathBuf>,

    /// The private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub(crate) key: Option<PathBuf>,

    /// Bind outgoing connections to these local addresses, taken in turn:
    /// an address, a range A-B or a CIDR block A/N (repeat for more; at
    /// most 65,536 in all; every address of 127.0.0.0/8 is local on
    /// loopback). One source address gives about 28,000 ports per server
    /// address; N give N times that. http://, h2c://, https://, grpc(s)://,
    /// postgres:// over TCP and redis(s)://; mysql:// refuses it
    /// (mysql_async opens its own sockets).
    #[arg(long, value_name = "ADDR|A-B|A/N")]
    pub(crate) source: Vec<String>,
}

impl RequestArgs {
    /// The protocol settings the flags give.
    pub(crate) fn target_options(&self) -> TargetOptions {
        let a = self;
        TargetOptions {
            http_version: match (a.http1, a.http2) {
                (true, _) => HttpVersion::Http1,
                (_, true) => HttpVersion::Http2,
                _ => HttpVersion::Auto,
            },
            insecure: a.insecure,
            h2_crate: a.h2_client == H2ClientArg::H2,
            cacert: a.cacert.clone(),
            tls_resume: match a.tls_resume.as_str() {
                "off" => TlsResume::Off,
                _ => TlsResume::On,
            },
            cert: a.cert.clone(),
            key: a.key.clone(),
            query: a.query.clone(),
            setup: a.setup.clone(),
            query_mode: a.query_mode,
            params: a.params.clone(),
            command: a.command.clone(),
            http: HttpRequestOptions {
                method: a.method.clone(),
                headers: a.headers.clone(),
                body: a.body.clone(),
                body_file: a.body_file.clone(),
                content_type: a.content_type.clone(),
                host: a.host.clone(),
            },
            grpc: GrpcOptions {
                proto: a.proto.clone(),
                import_paths: a.import_path.clone(),
                call: a.call.clone(),
                data: a.data.clone(),
                data_file: a.data_file.clone(),
            },
            source: a.source.clone(),
        }
    }
}
