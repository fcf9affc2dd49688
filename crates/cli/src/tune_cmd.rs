//! `poolbench tune`: the target and the client's load from the arguments,
//! the search (tune_search.rs), then the answer written and printed.
use crate::args::Format;
use crate::tune_args::TuneArgs;
use crate::tune_search::EngineMeasure;
use crate::Failure;
use poolbench_model::StrategySpec;
use poolbench_model::{Family, LoadModel, Plan, Scheme, TuneLoad, TuneResult};
use poolbench_server::{DelaySpec, EmbeddedServer, ServerConfig};
use poolbench_targets::{HttpVersion, TargetSpec};
use poolbench_tune::{Probes, Searcher, Setup, WallClock};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

pub(crate) fn tune(a: TuneArgs) -> Result<(), Failure> {
    if a.hold.is_some() {
        return Err(Failure::input(
            "--hold: how long --find-rate holds each rate; tune -c/--rate measures its own windows",
        ));
    }
    if a.slo
        .as_ref()
        .is_some_and(|s| s.p90_us.is_some() || s.p999_us.is_some())
    {
        return Err(Failure::input(
            "--slo: p90 and p99.9 bounds are judged by run and tune --find-rate; tune's pool search bounds p50 and p99",
        ));
    }
    check_outputs(&a.output)?;
    // Bound before any load: a bad address stops the search here.
    let watch = crate::metrics_listen::Watch::start(&a.metrics, "tune")?;
    let embedded = a.target.is_none();
    let (target, server) = target_of(&a)?;
    let families = families(&a, &target)?;
    let load = client_load(&a)?;
    let base = base_plan(&a, target.clone());
    base.validate().map_err(Failure::input)?;
    let fd_limit = crate::limits::raise();
    let most = most_in_flight(&a, load, fd_limit, embedded);
    check_load(&a, load, most)?;
    crate::signals::watch()
        .map_err(|e| Failure::runtime(format!("cannot watch for Ctrl-C: {e}")))?;
    let mut setup = setup_of(&a, load, families, most, base.warmup);
    let mut skeleton = crate::tune_idle::skeleton(&a, &base, &mut setup, embedded);
    skeleton.fleet = crate::fleet_args::fleet(&a.fleet);
    let measure = EngineMeasure {
        base: base.clone(),
        quiet: a.quiet,
        live: crate::metrics_listen::LiveOnly(watch.live.clone()),
        reached: false,
        threads_fixed: a.threads.is_some(),
    };
    let mut result = Searcher::new(setup, skeleton, measure, WallClock::start()).run()?;
    poolbench_tune::conclude(&mut result, &target.scheme);
    result.fleet_check = crate::tune_fleet::after(&result, &base, a.quiet);
    stop_server(&mut result, server);
    write_and_print(&a, &result)?;
    watch.finish();
    verdict(&result)
}

/// The target asked for, or the built-in server started to be it.
pub(crate) fn target_of(a: &TuneArgs) -> Result<(TargetSpec, Option<EmbeddedServer>), Failure> {
    Ok(match &a.target {
        Some(url) => (
            poolbench_targets::parse_target(url).map_err(Failure::input)?,
            None,
        ),
        None => {
            let s = EmbeddedServer::start(embedded_config(a), crate::run_cmd::cores())
                .map_err(|e| Failure::runtime(format!("cannot start the built-in server: {e}")))?;
            (TargetSpec::http(s.addr(), "/"), Some(s))
        }
    })
}

/// Refuses `-c C` above the `most` connections this process may hold.
fn check_load(a: &TuneArgs, load: TuneLoad, most: usize) -> Result<(), Failure> {
    if let TuneLoad::Concurrency(c) = load {
        if c > most {
            return Err(Failure::input(format!(
                "-c {c}: this process may hold at most {most} connections (the descriptor limit, ulimit -Hn{})",
                if a.max_pool.is_some() { ", or --max-pool" } else { "" }
            )));
        }
    }
    Ok(())
}

/// What the search is asked: load, SLO, budget, families, probes.
fn setup_of(
    a: &TuneArgs,
    load: TuneLoad,
    families: Vec<String>,
    most: usize,
    warmup: Duration,
) -> Setup {
    Setup {
        load,
        slo: a.slo.clone(),
        budget: a.budget,
        recovery: a.recovery,
        families,
        most_in_flight: most,
        warmup,
        skipped: Vec::new(),
        compare_threads: compare_threads(a, load),
        probes: Probes {
            // The server's own limit, read before any load (unreachable: exit 2).
            server_limit: a.fleet.replicas.is_some(),
            pipeline: crate::tune_pipeline::asked(a),
            idle: None,
        },
    }
}

/// The result written to each `-o`, then printed in `--format`.
fn write_and_print(a: &TuneArgs, result: &TuneResult) -> Result<(), Failure> {
    for path in &a.output {
        write(path, &render(format_of(path)?, result))?;
    }
    let format = Format::from(a.format);
    crate::output::emit(&render(format, result));
    Ok(())
}

/// Exit 1 when no pool was recommended, unless a stop cut the search short.
fn verdict(result: &TuneResult) -> Result<(), Failure> {
    // Interrupted: 130 or 143 (main.rs), the search so far printed.
    if result.recommendation.is_some() || crate::signals::exit_code().is_some() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "no pool recommended: {}",
        result.reason.as_deref().unwrap_or("see the report")
    )))
}

/// The built-in server, if one ran, stopped and named in the result.
fn stop_server(result: &mut TuneResult, server: Option<EmbeddedServer>) {
    if let Some(s) = server {
        result.target = format!("built-in server at http://{}/", s.addr());
        s.shutdown();
    }
}

/// The client's load: -c C workers or --rate R arrivals a second.
fn client_load(a: &TuneArgs) -> Result<TuneLoad, Failure> {
    match (a.concurrency, a.rate) {
        (Some(c), _) => Ok(TuneLoad::Concurrency(c)),
        (None, Some(r)) => Ok(TuneLoad::Rate(r)),
        (None, None) => Err(Failure::input(
            "tune needs the client's load: -c C or --rate R",
        )),
    }
}

/// The strategy families to search: as asked, or the protocol's default.
fn families(a: &TuneArgs, target: &TargetSpec) -> Result<Vec<String>, Failure> {
    if a.strategy.is_empty() {
        let defaults = match multiplexed(a, target) {
            true => [Family::Shared, Family::RoundRobin].as_slice(),
            false => &[Family::Pool],
        };
        return Ok(defaults.iter().map(|f| f.to_string()).collect());
    }
    let mut out: Vec<String> = Vec::new();
    for s in &a.strategy {
        let kind = s.kind();
        let family = kind
            .parse::<Family>()
            .map_err(|e| Failure::input(format!("-s {kind}: {e}")))?;
        if family == Family::Pipeline && a.concurrency.is_none() {
            return Err(Failure::input(
                "-s pipeline: tune sizes a pipeline at the client's concurrency (-c C), not at a --rate",
            ));
        }
        if family == Family::Pipeline && target.scheme != "http" {
            return Err(Failure::input(format!(
                "-s pipeline: pipelining is HTTP/1.1 over http:// here, not {}://",
                target.scheme
            )));
        }
        if s.size().is_some() {
            return Err(Failure::input(format!(
                "-s {s}: tune searches the size itself; give the family alone (-s {kind})"
            )));
        }
        if !out.iter().any(|k| k == kind) {
            out.push(kind.to_string());
        }
    }
    Ok(out)
}

/// Whether the target's requests share connections as streams (h2c,
/// gRPC, HTTPS with --http2): its default families are then `shared` and
/// `round-robin`.
pub(crate) fn multiplexed(a: &TuneArgs, target: &TargetSpec) -> bool {
    matches!(
        target.protocol(),
        Scheme::H2c | Scheme::Grpc | Scheme::Grpcs
    ) || (target.protocol() == Scheme::Https && a.request.http2)
}

/// What every point shares: the target, its request, the timeouts.
pub(crate) fn base_plan(a: &TuneArgs, target: TargetSpec) -> Plan {
    let mut plan = Plan::new(target);
    plan.strategies = vec![StrategySpec::Pool(Some(1))];
    plan.concurrency = vec![1];
    plan.duration = Duration::from_secs(1);
    plan.warmup = Duration::from_millis(300);
    plan.timeout = a.timeout;
    plan.connect_timeout = a.connect_timeout;
    plan.target_options = a.request.target_options();
    plan.target_options.fill_query_mode(&plan.target.scheme);
    if a.request.http2 {
        plan.target_options.http_version = HttpVersion::Http2;
    }
    plan.load = LoadModel::Closed;
    if let Some(n) = a.threads {
        plan.threads = n;
    }
    plan
}

/// One load thread against one per core, compared by the search once the
/// generator is busy: unless `--threads` is given, the machine has one
/// core, or the load is a rate (whose threads follow it, as in `run`).
fn compare_threads(a: &TuneArgs, load: TuneLoad) -> Option<usize> {
    let cores = crate::run_cmd::cores();
    (a.threads.is_none() && cores > 1 && matches!(load, TuneLoad::Concurrency(_))).then_some(cores)
}

/// Most requests in flight (and connections) the search may use: 4× the
/// client's load or --max-pool, within the descriptors.
fn most_in_flight(a: &TuneArgs, load: TuneLoad, fd_limit: Option<u64>, embedded: bool) -> usize {
    let wanted = match load {
        TuneLoad::Concurrency(c) => (4 * c).max(16),
        TuneLoad::Rate(_) => 1024,
    };
    let sides = if embedded { 2 } else { 1 };
    let fds = fd_limit.map_or(usize::MAX, |l| (l.saturating_sub(128) / sides) as usize);
    a.max_pool.map_or(wanted, |m| m.max(1)).min(fds).max(1)
}

fn embedded_config(a: &TuneArgs) -> ServerConfig {
    ServerConfig {
        listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        delay: a
            .server_delay
            .unwrap_or(DelaySpec::Fixed(Duration::from_millis(1))),
        max_inflight: a.server_max_inflight,
        stall: a.server_stall.unwrap_or(Duration::ZERO),
        stall_every: a.server_stall_every,
        ..ServerConfig::default()
    }
}

fn render(format: Format, r: &TuneResult) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(r).expect("a result serializes") + "\n",
        Format::Html => poolbench_report::render_tune_html(r),
        Format::Markdown => poolbench_report::render_tune_markdown(r),
        Format::Csv => poolbench_report::render_tune_csv(r),
        Format::Junit => poolbench_report::render_junit(&poolbench_report::tune_junit(r)),
        Format::Text => poolbench_report::render_tune_text(r),
    }
}

/// `poolbench report TUNE.json`: a saved tune read again with this
/// version's conclusions, in any format.
pub(crate) fn report(mut r: TuneResult, a: &crate::args::ReportArgs) -> Result<(), Failure> {
    let scheme = crate::saved::tune_scheme(&r);
    poolbench_tune::conclude(&mut r, &scheme);
    crate::output::rerender(a, |format| render(format, &r))
}

fn format_of(path: &std::path::Path) -> Result<Format, Failure> {
    match crate::output::format_of(path)? {
        f @ (Format::Json | Format::Html | Format::Text) => Ok(f),
        _ => Err(Failure::input(format!(
            "-o {}: tune writes .json, .html or .txt",
            path.display()
        ))),
    }
}

fn check_outputs(outputs: &[PathBuf]) -> Result<(), Failure> {
    crate::output::check(outputs)?;
    outputs.iter().try_for_each(|p| format_of(p).map(|_| ()))
}

pub(crate) fn write(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))
}
