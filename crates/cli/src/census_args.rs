//! `poolbench census`'s arguments.
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct CensusArgs {
    /// The server: postgres://, mysql:// (mariadb://), redis:// (rediss://),
    /// or PgBouncer (its URL: the admin console is read, as the database
    /// pgbouncer, the login in its admin_users or stats_users).
    pub(crate) target: String,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = CensusFormat::Text)]
    pub(crate) format: CensusFormat,

    /// A connection idle longer than this counts toward the idle-hoard
    /// finding.
    #[arg(long, default_value = "60s", value_parser = crate::parse::positive_duration)]
    pub(crate) idle_after: Duration,

    /// Connect timeout.
    #[arg(long, default_value = "5s", value_parser = crate::parse::positive_duration)]
    pub(crate) connect_timeout: Duration,

    /// CA certificates (PEM) to trust for the server's TLS certificate.
    #[arg(long, value_name = "FILE")]
    pub(crate) cacert: Option<std::path::PathBuf>,
}

/// What `census` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CensusFormat {
    /// A sentence and a table of the groups, then the findings.
    Text,
    /// The census as JSON.
    Json,
}
