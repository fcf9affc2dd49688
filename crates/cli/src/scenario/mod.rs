//! `poolbench scenario list|show|run`: the classic pool experiments as
//! files (TOML), built in or the user's own. A step starts the built-in
//! server it needs, runs a grid against it, and checks what the step is
//! expected to show; a scenario whose expectation fails exits 1.
mod expect;
mod file;
mod server;

use crate::args::{Cli, Command, ScenarioArgs, ScenarioCommand};
use crate::Failure;
use clap::Parser;
use std::path::{Path, PathBuf};

/// The scenarios shipped in the binary (also under `scenarios/`).
const BUILT_IN: [(&str, &str); 5] = [
    (
        "slow-api-pools",
        include_str!("../../../../scenarios/slow-api-pools.toml"),
    ),
    (
        "grpc-client-concurrency",
        include_str!("../../../../scenarios/grpc-client-concurrency.toml"),
    ),
    (
        "db-pool-starvation",
        include_str!("../../../../scenarios/db-pool-starvation.toml"),
    ),
    (
        "db-pool-starvation-mysql",
        include_str!("../../../../scenarios/db-pool-starvation-mysql.toml"),
    ),
    (
        "pool-size-grid",
        include_str!("../../../../scenarios/pool-size-grid.toml"),
    ),
];

pub(crate) fn scenario(a: ScenarioArgs) -> Result<(), Failure> {
    match a.command {
        ScenarioCommand::List => {
            for (name, text) in BUILT_IN {
                let s = file::parse(text, name).map_err(Failure::runtime)?;
                println!("{name:<26} {}", s.title);
            }
            Ok(())
        }
        ScenarioCommand::Show { name } => {
            let (text, _) = source(&name)?;
            print!("{text}");
            Ok(())
        }
        ScenarioCommand::Run {
            name,
            output,
            quiet,
        } => run(&name, &output, quiet),
    }
}

/// A built-in scenario's text, or a file's.
fn source(name: &str) -> Result<(String, String), Failure> {
    if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
        return Ok((text.to_string(), name.to_string()));
    }
    let path = Path::new(name);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("cannot read {name}: {e}")))?;
        return Ok((text, name.to_string()));
    }
    let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    Err(Failure::input(format!(
        "no scenario {name}: built in are {} (or give a .toml file)",
        names.join(", ")
    )))
}

/// Each step's outputs: `r.json` as given for the first step, `r.2.json`
/// for the second, and so on.
fn step_outputs(output: &[PathBuf], step: usize) -> Vec<PathBuf> {
    output
        .iter()
        .map(|p| match step {
            0 => p.clone(),
            _ => {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                let ext = p.extension().map(|s| s.to_string_lossy().into_owned());
                p.with_file_name(format!(
                    "{}.{}.{}",
                    stem.unwrap_or_default(),
                    step + 1,
                    ext.unwrap_or_default()
                ))
            }
        })
        .collect()
}

fn env_url(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The services the scenario needs, from the environment: the
/// PostgreSQL, MySQL and Redis URLs.
fn services(s: &file::Scenario, name: &str) -> Result<file::Services, Failure> {
    let urls = file::Services {
        postgres: env_url("POOLBENCH_PG_URL"),
        mysql: env_url("POOLBENCH_MYSQL_URL"),
        redis: env_url("POOLBENCH_REDIS_URL"),
    };
    for need in &s.needs {
        let (have, var, what) = match need.as_str() {
            "postgres" => (&urls.postgres, "POOLBENCH_PG_URL", "PostgreSQL"),
            "mysql" => (&urls.mysql, "POOLBENCH_MYSQL_URL", "MySQL"),
            _ => (&urls.redis, "POOLBENCH_REDIS_URL", "Redis"),
        };
        if have.is_none() {
            return Err(Failure::input(format!(
                "scenario {} needs {what}: run it as scripts/scenario.sh {name}, which starts one, or set {var}",
                s.name
            )));
        }
    }
    Ok(urls)
}

/// Each step's `run` arguments, parsed.
fn step_runs(
    s: &file::Scenario,
    origin: &str,
    output: &[PathBuf],
    quiet: bool,
) -> Result<Vec<crate::args::RunArgs>, Failure> {
    let mut plans = Vec::new();
    for (i, step) in s.steps.iter().enumerate() {
        let mut argv: Vec<String> = vec!["poolbench".into(), "run".into(), step.target.clone()];
        argv.extend(step.run.args());
        if quiet {
            argv.push("--quiet".into());
        }
        let cli = Cli::try_parse_from(&argv).map_err(|e| {
            let text = e.render().to_string();
            let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            Failure::input(format!("{origin}, step {} ({}): {line}", i + 1, step.title))
        })?;
        let Command::Run(mut a) = cli.command else {
            unreachable!("parsed as run")
        };
        a.output = step_outputs(output, i);
        plans.push(*a);
    }
    Ok(plans)
}

fn run(name: &str, output: &[PathBuf], quiet: bool) -> Result<(), Failure> {
    let (text, origin) = source(name)?;
    let s = file::parse(&text, &origin).map_err(Failure::input)?;
    let urls = services(&s, name)?;
    let output: Vec<PathBuf> = s.output.iter().chain(output).cloned().collect();
    let output = output.as_slice();
    crate::output::check(output)?;
    // Every step's run is parsed before any load: a bad flag stops it all.
    let plans = step_runs(&s, &origin, output, quiet)?;
    println!("scenario {}: {}", s.name, s.title);
    let mut failed = Vec::new();
    let n = s.steps.len();
    for (i, (step, mut a)) in s.steps.iter().zip(plans).enumerate() {
        println!("\n=== step {}/{n}: {}", i + 1, step.title);
        let server = match &step.serve {
            Some(serve) => Some(server::Server::start(&serve.args(&urls), serve.grpc)?),
            None => None,
        };
        if let Some(srv) = &server {
            let target = step
                .target
                .replace("{http}", &srv.http)
                .replace("{grpc}", srv.grpc.as_deref().unwrap_or(""));
            a.target = Some(target);
        }
        let result = crate::run_cmd::execute(a)?;
        drop(server);
        println!("\nexpected of this step:");
        for v in expect::check(&step.expect, &result) {
            println!("  {} {}", if v.met { "met   " } else { "FAILED" }, v.line);
            if !v.met {
                failed.push(format!("step {}: {}", i + 1, v.line));
            }
        }
        if result.interrupted.is_some() {
            return Ok(());
        }
    }
    println!("\nWhat this shows\n");
    for line in s.shows.trim().lines() {
        println!("  {line}");
    }
    match failed.is_empty() {
        true => {
            println!("\nEvery expectation met.");
            Ok(())
        }
        false => Err(Failure::runtime(format!(
            "scenario {}: {} expectation(s) not met: {}",
            s.name,
            failed.len(),
            failed.join("; ")
        ))),
    }
}
