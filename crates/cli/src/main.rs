//! `poolbench`: the binary. Parses arguments, hands a plan to the engine and
//! the result to the report; nothing here measures.
#![forbid(unsafe_code)]

mod args;
mod census_args;
mod census_cmd;
mod check_args;
mod check_client;
mod compare_cmd;
mod fleet_args;
mod fleet_run;
mod http_counters;
mod idle_args;
mod limits;
mod metrics_args;
mod metrics_listen;
mod output;
mod parse;
mod progress;
mod replica_cmd;
mod request_args;
mod run_cmd;
mod run_threads;
mod saved;
mod scenario;
mod serve_args;
mod serve_cmd;
mod serve_metrics;
mod signals;
mod survey_read;
mod tune_args;
mod tune_cmd;
mod tune_fleet;
mod tune_idle;
mod tune_pipeline;
mod tune_rate;
mod tune_search;

use clap::Parser;
use std::process::ExitCode;

/// Allocation sits on every request's path (the protocol crates allocate
/// per request); mimalloc's thread-local free lists make it cheaper than
/// the system allocator's, for the load generator and the built-in server.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// An error worth one line to the user, with the exit code it means.
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl Failure {
    /// Bad input: exit code 2.
    pub(crate) fn input(message: impl std::fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            code: 2,
        }
    }
    /// Something failed while working: exit code 1.
    pub(crate) fn runtime(message: impl std::fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            code: 1,
        }
    }

    /// The engine's error: its runtime failing is exit 1, anything else
    /// (bad input, an unreachable target) exit 2.
    pub(crate) fn of_engine(e: poolbench_engine::EngineError) -> Failure {
        match e {
            poolbench_engine::EngineError::Runtime(_) => Failure::runtime(e),
            _ => Failure::input(e),
        }
    }
}

/// `poolbench report RESULT.json`: a saved result, of `run`, `tune` or
/// `serve --check-client`, rendered again.
fn report(a: args::ReportArgs) -> Result<(), Failure> {
    let mut result = match saved::load(&a.result)? {
        saved::Saved::Run(r) => *r,
        saved::Saved::Tune(t) => return tune_cmd::report(*t, &a),
        saved::Saved::Rate(r) => return tune_rate::report(*r, &a),
        saved::Saved::Check(c) => return check_client::report(*c, &a),
    };
    // Read with this version's analysis, as `run` and `merge` do.
    poolbench_analysis::analyze(&mut result);
    output::check(&a.output)?;
    output::check_hdr_dir(&a.views)?;
    output::write_all(&a.output, &result)?;
    output::write_hdr_logs(&a.views, &result)?;
    output::emit(&output::render(a.format, &result, &a.views));
    Ok(())
}

/// `poolbench merge A.json B.json … -o M.json`.
fn merge(a: args::MergeArgs) -> Result<(), Failure> {
    output::check(&a.output)?;
    let parts = a
        .results
        .iter()
        .map(|p| output::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    if parts.len() < 2 && parts.iter().all(|r| r.shard.is_none()) {
        return Err(Failure::input(
            "merge needs two or more results, or the shards of one plan (run with --shard I/N)",
        ));
    }
    let merged = poolbench_analysis::merge(&parts).map_err(Failure::input)?;
    output::write_all(&a.output, &merged)?;
    output::emit(&output::render(
        a.format,
        &merged,
        &args::ViewArgs::default(),
    ));
    Ok(())
}

fn main() -> ExitCode {
    // mimalloc asks for transparent huge pages: each first touch of its
    // arenas then zeroes 2 MB, which cost up to 9% of a short run's CPU
    // (bench/log/RESULTS.md). Pages of 4 KB are zeroed as they are used.
    // Best effort: a kernel without the flag runs as before.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut line = lines.next().unwrap_or("invalid arguments").to_string();
            // "the following required arguments were not provided:" and
            // the like: the next line says which.
            if line.ends_with(':') {
                if let Some(next) = lines.next() {
                    line = format!("{line} {next}");
                }
            }
            eprintln!("{line}");
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        args::Command::Run(a) => run_cmd::run(*a),
        args::Command::Serve(a) => serve_cmd::serve(*a),
        args::Command::Report(a) => report(a),
        args::Command::Compare(a) => compare_cmd::compare(a),
        args::Command::Merge(a) => merge(a),
        args::Command::Scenario(a) => scenario::scenario(a),
        args::Command::Tune(a) if a.find_rate => tune_rate::find_rate(*a),
        args::Command::Tune(a) => tune_cmd::tune(*a),
        args::Command::Replica(a) => replica_cmd::replica(&a.plan),
        args::Command::Census(a) => census_cmd::census(a),
        args::Command::Explain(a) => explain(&a),
        args::Command::Schema(a) => {
            let schema = match a.of {
                args::SchemaOf::Result => poolbench_model::result_schema(),
                args::SchemaOf::Comparison => poolbench_report::comparison_schema(),
                args::SchemaOf::FigureComparison => poolbench_report::figure_comparison_schema(),
                args::SchemaOf::Tune => poolbench_model::tune_schema(),
                args::SchemaOf::Rate => poolbench_model::rate_schema(),
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&schema).expect("a schema serializes")
            );
            Ok(())
        }
    };
    match outcome {
        // Stopped by a signal, results kept: 130 (SIGINT) or 143 (SIGTERM).
        Ok(()) => signals::exit_code().map_or(ExitCode::SUCCESS, ExitCode::from),
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// `poolbench explain [ID]`: one finding, every id, or the Markdown page.
fn explain(a: &args::ExplainArgs) -> Result<(), Failure> {
    use poolbench_model::findings::Id;
    let text = match (a.format, &a.id) {
        (args::ExplainFormat::Markdown, _) => poolbench_report::explain_markdown(),
        (args::ExplainFormat::Text, None) => poolbench_report::explain_list(),
        (args::ExplainFormat::Text, Some(name)) => {
            let known: Vec<&str> = Id::ALL.iter().map(Id::as_str).collect();
            poolbench_report::explain_name(name).ok_or_else(|| {
                Failure::input(format!(
                    "no finding or inference named \"{name}\" (known: {}; `poolbench explain` lists them)",
                    known.join(", ")
                ))
            })?
        }
    };
    print!("{text}");
    Ok(())
}
