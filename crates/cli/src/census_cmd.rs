//! `poolbench census TARGET`: the connections a database or pooler holds
//! now, grouped, against its limit (survey_read.rs asks the server;
//! `poolbench_analysis::census` groups and judges). No load.
use crate::Failure;
use clap::{Args, ValueEnum};
use poolbench_model::TargetOptions;
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

pub(crate) fn census(a: CensusArgs) -> Result<(), Failure> {
    let spec = poolbench_targets::parse_target(&a.target).map_err(Failure::input)?;
    let options = TargetOptions {
        cacert: a.cacert.clone(),
        ..TargetOptions::default()
    };
    let survey = crate::survey_read::read(&spec, &options, a.connect_timeout)?.ok_or_else(|| {
        Failure::input(format!(
            "census reads databases and poolers (postgres://, mysql://, redis://), not {}://",
            spec.scheme
        ))
    })?;
    let census = poolbench_analysis::census(
        spec.redacted(),
        poolbench_model::duration::now_rfc3339(),
        survey.limit,
        &survey.seen,
        a.idle_after.as_secs_f64(),
        survey.notes,
    );
    crate::output::emit(&match a.format {
        CensusFormat::Json => {
            serde_json::to_string_pretty(&census).expect("a census serializes") + "\n"
        }
        CensusFormat::Text => poolbench_report::render_census_text(&census),
    });
    Ok(())
}
