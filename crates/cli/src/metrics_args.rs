//! `--metrics-listen` and `--metrics-linger`, shared by `run`, `tune`,
//! `scenario run` and `serve`.
use crate::parse;
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

/// Live metrics for Prometheus while the process runs.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct MetricsArgs {
    /// Serve live metrics for Prometheus at http://ADDR/metrics while
    /// this runs (IP:PORT; with port 0 a free one, printed on stderr).
    /// Bind loopback unless something else must scrape it (in a pod,
    /// 0.0.0.0). See docs/metrics.md.
    #[arg(long, value_name = "ADDR", value_parser = parse::listen_addr,
          help_heading = "Live metrics")]
    pub(crate) metrics_listen: Option<SocketAddr>,

    /// Keep serving the metrics this long after the work is done, so a
    /// last scrape sees the final values (a Ctrl-C ends it early).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse::duration,
          requires = "metrics_listen", help_heading = "Live metrics")]
    pub(crate) metrics_linger: Duration,
}
