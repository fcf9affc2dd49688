//! `serve --check-client`'s options.
use crate::parse;
use clap::{Args, ValueEnum};
use poolbench_model::Expect;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(next_help_heading = "Checking your client (--check-client)")]
pub(crate) struct CheckArgs {
    /// Watch the clients that connect and, once they are gone, report what
    /// their pool did: connections per request, in flight, idle gaps, how
    /// connections ended, HTTP/2 streams; and the findings client-churn,
    /// client-hidden-cap, client-idle-race, client-single-connection with
    /// the setting to change. Ends --client-gone after the last
    /// connection closes.
    #[arg(long)]
    pub(crate) check_client: bool,

    /// The client library, for its own setting in each finding: go,
    /// grpc-go, grpcio, requests, httpx, aiohttp, curl, poolbench,
    /// hackney, finch, okhttp, reqwest.
    #[arg(long, requires = "check_client", value_parser = client_lib)]
    pub(crate) client: Option<String>,

    /// What you meant the client to do, comma-separated:
    /// KEY=N, KEY>=N, KEY<=N, KEY>N, KEY<N with KEY pool (most
    /// connections open at once; also `connections`), in-flight,
    /// new-connections, requests, requests-per-connection, streams.
    /// Exit 1 when one fails: e.g. --expect 'pool=25,in-flight>=100'.
    #[arg(long, requires = "check_client", value_parser = expect)]
    pub(crate) expect: Option<Expects>,

    /// The client is gone once no connection has been open and no request
    /// in flight this long (after its first request).
    #[arg(long, default_value = "3s", value_parser = parse::positive_duration)]
    pub(crate) client_gone: Duration,

    /// Give up when no client has come, or the client has not gone, after
    /// this long (exit 1 without a client; the report, with one).
    #[arg(long, default_value = "10m", value_parser = parse::positive_duration)]
    pub(crate) check_timeout: Duration,

    /// Also print the report so far every this long while the client runs.
    #[arg(long, requires = "check_client", value_parser = parse::positive_duration)]
    pub(crate) report_every: Option<Duration>,

    /// The report's format on stdout.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text, requires = "check_client")]
    pub(crate) format: CheckFormat,

    /// Also write the report to FILE, in the format its extension names
    /// (.json, .html, .txt, .xml for JUnit); repeat to write several.
    #[arg(short, long, value_name = "FILE", requires = "check_client")]
    pub(crate) output: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    /// Words for people.
    Text,
    /// The whole check as JSON.
    Json,
    /// A self-contained HTML page.
    Html,
    /// JUnit XML: a test case per --expect bound.
    Junit,
}

/// The bounds of one `--expect`.
#[derive(Clone, Debug)]
pub(crate) struct Expects(pub(crate) Vec<Expect>);

/// `--expect pool=25,in-flight>=100`.
fn expect(s: &str) -> Result<Expects, String> {
    poolbench_model::parse_expect(s).map(Expects)
}

/// `--client LIB`: a library `serve --check-client` knows.
fn client_lib(s: &str) -> Result<String, String> {
    match poolbench_analysis::client_lib(s) {
        Some(l) => Ok(l.key.to_string()),
        None => Err(format!(
            "unknown client \"{s}\" (one of: {})",
            poolbench_analysis::client_keys()
        )),
    }
}
