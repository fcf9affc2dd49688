//! `poolbench scenario list|show|run`: the classic pool experiments as
//! files (TOML), built in or the user's own. A step starts the built-in
//! server it needs, runs a grid against it, and checks what the step is
//! expected to show; a scenario whose expectation fails exits 1.
mod expect;
mod file;
mod server;

use crate::args::{Cli, Command, Format, ScenarioArgs, ScenarioCommand};
use crate::Failure;
use clap::Parser;
use std::path::{Path, PathBuf};

/// The scenarios shipped in the binary (also under `scenarios/`).
const BUILT_IN: [(&str, &str); 7] = [
    (
        "slow-api-pools",
        include_str!("../../scenarios/slow-api-pools.toml"),
    ),
    (
        "grpc-client-concurrency",
        include_str!("../../scenarios/grpc-client-concurrency.toml"),
    ),
    (
        "db-pool-starvation",
        include_str!("../../scenarios/db-pool-starvation.toml"),
    ),
    (
        "db-pool-starvation-mysql",
        include_str!("../../scenarios/db-pool-starvation-mysql.toml"),
    ),
    (
        "pool-size-grid",
        include_str!("../../scenarios/pool-size-grid.toml"),
    ),
    (
        "pooler-in-front",
        include_str!("../../scenarios/pooler-in-front.toml"),
    ),
    (
        "http-client-sweep-pipelined",
        include_str!("../../scenarios/http-client-sweep-pipelined.toml"),
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
            format,
            quiet,
            metrics,
        } => {
            let watch = crate::metrics_listen::Watch::start(&metrics, "scenario")?;
            let outcome = run(&name, &output, format, quiet, watch.live.clone());
            watch.finish();
            outcome
        }
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
/// PostgreSQL, MySQL, Redis, PgBouncer and nginx URLs.
fn services(s: &file::Scenario, name: &str) -> Result<file::Services, Failure> {
    let urls = file::Services {
        postgres: env_url("POOLBENCH_PG_URL"),
        mysql: env_url("POOLBENCH_MYSQL_URL"),
        redis: env_url("POOLBENCH_REDIS_URL"),
        pgbouncer_session: env_url("POOLBENCH_PGBOUNCER_SESSION_URL"),
        pgbouncer_tx: env_url("POOLBENCH_PGBOUNCER_TX_URL"),
        nginx: env_url("POOLBENCH_NGINX_URL"),
    };
    for need in &s.needs {
        let (have, var, what) = match need.as_str() {
            "postgres" => (&urls.postgres, "POOLBENCH_PG_URL", "PostgreSQL"),
            "mysql" => (&urls.mysql, "POOLBENCH_MYSQL_URL", "MySQL"),
            "pgbouncer" => (
                &urls.pgbouncer_tx,
                "POOLBENCH_PGBOUNCER_TX_URL",
                "PgBouncer",
            ),
            "nginx" => (&urls.nginx, "POOLBENCH_NGINX_URL", "nginx"),
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
    urls: &file::Services,
) -> Result<Vec<crate::args::RunArgs>, Failure> {
    let mut plans = Vec::new();
    for (i, step) in s.steps.iter().enumerate() {
        let mut argv: Vec<String> = vec!["poolbench".into(), "run".into(), urls.fill(&step.target)];
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

/// Where a scenario's report goes: stdout, or stderr when stdout carries
/// the JUnit XML.
struct Out {
    junit: bool,
}

impl Out {
    fn say(&self, text: &str) {
        match self.junit {
            true => eprint!("{text}"),
            false => crate::output::emit(text),
        }
    }
}

fn run(
    name: &str,
    output: &[PathBuf],
    format: Format,
    quiet: bool,
    live: Option<std::sync::Arc<poolbench_engine::Live>>,
) -> Result<(), Failure> {
    if !matches!(format, Format::Text | Format::Junit) {
        return Err(Failure::input(
            "scenario run --format: text or junit (each step's result is saved with -o FILE.json)",
        ));
    }
    let out = Out {
        junit: format == Format::Junit,
    };
    let (text, origin) = source(name)?;
    let s = file::parse(&text, &origin).map_err(Failure::input)?;
    let urls = services(&s, name)?;
    let output: Vec<PathBuf> = s.output.iter().chain(output).cloned().collect();
    crate::output::check(&output)?;
    let (xml, output): (Vec<PathBuf>, Vec<PathBuf>) = output
        .into_iter()
        .partition(|p| p.extension().is_some_and(|e| e == "xml"));
    // Every step's run is parsed before any load: a bad flag stops it all.
    let plans = step_runs(&s, &origin, &output, quiet, &urls)?;
    out.say(&format!("scenario {}: {}\n", s.name, s.title));
    let mut suites = Vec::new();
    let n = s.steps.len();
    for (i, (step, mut a)) in s.steps.iter().zip(plans).enumerate() {
        out.say(&format!("\n=== step {}/{n}: {}\n", i + 1, step.title));
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
        let (views, outputs) = (a.views.clone(), a.output.clone());
        let result =
            crate::run_cmd::execute_with(a, live.clone(), crate::run_cmd::ThreadChoice::Default)?;
        out.say(&crate::output::render(Format::Text, &result, &views));
        crate::run_cmd::write_outputs(&outputs, &views, &result)?;
        drop(server);
        out.say("\nexpected of this step:\n");
        let verdicts = expect::check(&step.expect, &result);
        for v in &verdicts {
            let mark = if v.met { "met   " } else { "FAILED" };
            out.say(&format!("  {mark} {}\n", v.line));
        }
        suites.push(step_suite(&s.name, i, step, &result, &verdicts));
        if result.interrupted.is_some() {
            return finish_junit(&out, &xml, &suites);
        }
    }
    out.say("\nWhat this shows\n\n");
    for line in s.shows.trim().lines() {
        out.say(&format!("  {line}\n"));
    }
    finish_junit(&out, &xml, &suites)?;
    verdict(&out, &s.name, &suites)
}

/// Exit 1 naming every expectation not met.
fn verdict(out: &Out, name: &str, suites: &[poolbench_report::JunitSuite]) -> Result<(), Failure> {
    let failed: Vec<String> = suites
        .iter()
        .enumerate()
        .flat_map(|(i, suite)| {
            let step = i + 1;
            suite
                .cases
                .iter()
                .filter(|c| c.failure.is_some())
                .map(move |c| format!("step {step}: {}", c.measured))
        })
        .collect();
    match failed.is_empty() {
        true => {
            out.say("\nEvery expectation met.\n");
            Ok(())
        }
        false => Err(Failure::runtime(format!(
            "scenario {name}: {} expectation(s) not met: {}",
            failed.len(),
            failed.join("; ")
        ))),
    }
}

/// One step's expectations as a JUnit suite.
fn step_suite(
    name: &str,
    i: usize,
    step: &file::Step,
    result: &poolbench_model::RunResult,
    verdicts: &[expect::Verdict],
) -> poolbench_report::JunitSuite {
    let seconds: f64 = result.cells.iter().map(|c| c.duration_s).sum();
    let class = format!("scenario {name} step {}", i + 1);
    poolbench_report::JunitSuite {
        name: format!("scenario {name} step {}: {}", i + 1, step.title),
        started: poolbench_report::started(&result.started_at),
        cases: verdicts
            .iter()
            .map(|v| poolbench_report::JunitCase {
                class: class.clone(),
                // The expectation without its measured value, so the test's
                // name stays the same from run to run.
                name: v
                    .line
                    .split(" (measured")
                    .next()
                    .unwrap_or(&v.line)
                    .to_string(),
                measured: v.line.clone(),
                failure: (!v.met).then(|| format!("not met: {}", v.line)),
                seconds,
            })
            .collect(),
    }
}

/// The JUnit XML to stdout (with `--format junit`) and to each `-o FILE.xml`.
fn finish_junit(
    out: &Out,
    xml: &[PathBuf],
    suites: &[poolbench_report::JunitSuite],
) -> Result<(), Failure> {
    let text = poolbench_report::render_junit(suites);
    for path in xml {
        crate::output::write_atomic(path, &text)
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if out.junit {
        crate::output::emit(&text);
    }
    Ok(())
}
