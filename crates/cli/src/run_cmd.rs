use crate::args::{ArrivalArg, RunArgs};
use crate::http_counters::HttpCounters;
use crate::progress::Progress;
use crate::Failure;
use poolbench_engine::CounterReader;
use poolbench_model::{Arrival, LoadModel, Plan, ServerCounters};
use poolbench_model::{Scheme, StrategySpec};
use poolbench_server::{Counters, DelaySpec, EmbeddedServer, ServerConfig};
use poolbench_targets::TargetSpec;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The grid the built-in server runs when nothing else is asked: every
/// strategy, four loads, two pool sizes, about 90 s in all.
const EMBEDDED_STRATEGIES: [StrategySpec; 6] = [
    StrategySpec::PerRequest,
    StrategySpec::Shared,
    StrategySpec::RoundRobin(None),
    StrategySpec::Pool(None),
    StrategySpec::Elastic(None, None),
    StrategySpec::TakeOrCreate(None),
];

pub(crate) fn run(a: RunArgs) -> Result<(), Failure> {
    if a.dry_run {
        return dry_run(&a);
    }
    // Bound before any load: a bad address stops the run here.
    let watch = crate::metrics_listen::Watch::start(&a.metrics, "run")?;
    let (format, views, outputs) = (a.format, a.views.clone(), a.output.clone());
    let result = execute(a, watch.live.clone())?;
    // The result on stdout first: a file that cannot be written (a full
    // disk) is then one line and exit 1, and nothing measured is lost.
    crate::output::emit(&crate::output::render(format, &result, &views));
    write_outputs(&outputs, &views, &result)?;
    watch.finish();
    slo_verdict(&result)
}

/// Each `-o`, and the `--hdr-log` files.
pub(crate) fn write_outputs(
    outputs: &[std::path::PathBuf],
    views: &crate::args::ViewArgs,
    result: &poolbench_model::RunResult,
) -> Result<(), Failure> {
    crate::output::write_all(outputs, result)?;
    crate::output::write_hdr_logs(views, result)
}

/// Run the plan the arguments describe; the result for the caller to
/// print, write ([`write_outputs`]) and check. With `live`, the engine keeps it up
/// to date while the cells run.
pub(crate) fn execute(
    a: RunArgs,
    live: Option<Arc<poolbench_engine::Live>>,
) -> Result<poolbench_model::RunResult, Failure> {
    execute_with(a, live, ThreadChoice::Compare)
}

/// Whether `run` may compare load thread counts before its cells
/// (`run_threads`); a scenario's steps keep the default.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThreadChoice {
    Compare,
    Default,
}

pub(crate) fn execute_with(
    a: RunArgs,
    live: Option<Arc<poolbench_engine::Live>>,
    choice: ThreadChoice,
) -> Result<poolbench_model::RunResult, Failure> {
    let embedded = a.target.is_none();
    let mut server = None;
    let target = match &a.target {
        Some(url) => poolbench_targets::parse_target(url).map_err(Failure::input)?,
        None => {
            let config = embedded_config(&a);
            let s = EmbeddedServer::start(config.clone(), cores())
                .map_err(|e| Failure::runtime(format!("cannot start the built-in server: {e}")))?;
            let spec = TargetSpec::http(s.addr(), "/");
            server = Some((s, config));
            spec
        }
    };
    let mut plan = plan(&a, target, embedded);
    check_plan(&plan, embedded)?;
    crate::output::check(&a.output)?;
    crate::output::check_hdr_dir(&a.views)?;
    if a.views.hdr_log.is_some() && matches!(plan.load, LoadModel::Batch { .. }) {
        return Err(Failure::input(
            "--hdr-log: batches are timed per batch, not per second; run without --batch",
        ));
    }
    crate::limits::check_memory(&plan)?;
    crate::limits::check(&plan, embedded, crate::limits::raise())?;

    let counters: Option<Box<dyn CounterReader>> = match &server {
        Some((s, _)) => Some(Box::new(BuiltinCounters(s.stats()))),
        // A shard shares the server with the others: its counters are
        // theirs too.
        None if plan.shard.is_some() => None,
        // A poolbench server elsewhere (e.g. service mode, or its gRPC
        // listener) shows its counters over HTTP/1.1.
        None if matches!(
            plan.target.protocol(),
            Scheme::Http | Scheme::H2c | Scheme::Grpc
        ) =>
        {
            poolbench_targets::resolve(&plan.target)
                .ok()
                .and_then(|addr| HttpCounters::connect(addr, &plan.target.authority))
                .map(|p| Box::new(p) as Box<dyn CounterReader>)
        }
        None => None,
    };
    crate::signals::watch()
        .map_err(|e| Failure::runtime(format!("cannot watch for Ctrl-C: {e}")))?;
    let generator_threads = match choice == ThreadChoice::Compare && a.threads.is_none() {
        true => crate::run_threads::choose(&mut plan, cores(), a.quiet, counters.as_deref())?,
        false => None,
    };
    if !a.quiet {
        announce_schedule(&plan);
    }
    let progress = Progress::new(plan.cells().len(), a.quiet, live);
    let outcome = poolbench_engine::run(&plan, counters.as_deref(), &progress);
    progress.finish();
    let mut result = outcome.map_err(Failure::of_engine)?;
    poolbench_analysis::analyze(&mut result);
    result.generator_threads = generator_threads;
    if let Some((s, config)) = server {
        result.target = format!("built-in server at http://{}/", s.addr());
        result.server = serde_json::to_value(&config).ok();
        s.shutdown();
    }

    Ok(result)
}

/// The plan's own checks, and a shard's target.
fn check_plan(plan: &Plan, embedded: bool) -> Result<(), Failure> {
    if embedded && plan.shard.is_some() {
        return Err(Failure::input(
            "--shard needs a target URL: every shard must load the same server, not a built-in one of its own",
        ));
    }
    plan.validate().map_err(Failure::input)
}

/// `--dry-run`: the checks of a run, then its cells; no load.
fn dry_run(a: &RunArgs) -> Result<(), Failure> {
    let embedded = a.target.is_none();
    let target = match &a.target {
        Some(url) => poolbench_targets::parse_target(url).map_err(Failure::input)?,
        None => TargetSpec::http(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), "/"),
    };
    let plan = plan(a, target, embedded);
    check_plan(&plan, embedded)?;
    crate::output::check(&a.output)?;
    crate::limits::check_memory(&plan)?;
    crate::limits::check(&plan, embedded, crate::limits::raise())?;
    let schedule = poolbench_model::StartSlots::of(&plan);
    let whole = plan.cells();
    let (mine, notes) = match plan.shard {
        Some(shard) => shard.split(&plan).map_err(Failure::input)?,
        None => (whole.clone(), Vec::new()),
    };
    let target = match embedded {
        true => "the built-in server".to_string(),
        false => plan.target.redacted(),
    };
    println!(
        "plan {} · {} · {} cell(s)",
        &poolbench_model::plan_hash(&plan)[..12],
        target,
        whole.len()
    );
    if let Some(shard) = plan.shard {
        println!("shard {shard}: its share of each cell");
    }
    if plan.stop_on_slo {
        println!(
            "--stop-on-slo: a strategy's cells above two in a row that break the SLO are skipped"
        );
    }
    for n in notes {
        println!("  {n}");
    }
    if let Some(s) = schedule {
        println!(
            "starts at {}; each run (cell, repetition) gets {}",
            plan.start_at.as_deref().unwrap_or_default(),
            poolbench_model::duration::format(s.slot)
        );
    }
    for (w, m) in whole.iter().zip(&mine) {
        match plan.shard {
            Some(_) => println!("  {:<28} runs {}", w.label(), m.label()),
            None => println!("  {}", w.label()),
        }
    }
    Ok(())
}

/// A shard's split and a scheduled start, on stderr before the run.
fn announce_schedule(plan: &Plan) {
    if let Some(shard) = plan.shard {
        if let Ok((_, notes)) = shard.split(plan) {
            for n in notes {
                eprintln!("shard {shard}: {n}");
            }
        }
    }
    if let Some(s) = poolbench_model::StartSlots::of(plan) {
        let wait = s
            .start
            .duration_since(std::time::SystemTime::now())
            .unwrap_or_default();
        eprintln!(
            "waiting {:.1} s for --start-at {}; each run gets a {} slot",
            wait.as_secs_f64(),
            plan.start_at.as_deref().unwrap_or_default(),
            poolbench_model::duration::format(s.slot)
        );
    }
}

/// With `--slo`: exit 1 when no cell met it, naming what each broke.
/// Cells `--stop-on-slo` skipped were not measured: they neither meet
/// nor fail it.
fn slo_verdict(result: &poolbench_model::RunResult) -> Result<(), Failure> {
    let verdicts: Vec<(String, &Vec<String>)> = result
        .cells
        .iter()
        .filter_map(|c| {
            let b = c.slo_breaches.as_ref()?;
            Some((c.label(), b))
        })
        .collect();
    if verdicts.is_empty() || verdicts.iter().any(|(_, b)| b.is_empty()) {
        return Ok(());
    }
    let each: Vec<String> = verdicts
        .iter()
        .map(|(cell, b)| format!("{cell}: {}", b.join(", ")))
        .collect();
    let skipped = match result.skipped.len() {
        0 => String::new(),
        n => format!("; {n} cell(s) above them skipped"),
    };
    Err(Failure::runtime(format!(
        "no cell meets the SLO ({}{skipped})",
        each.join("; ")
    )))
}

fn plan(a: &RunArgs, target: TargetSpec, embedded: bool) -> Plan {
    let mut plan = Plan::new(target);
    plan_grid(&mut plan, a, embedded);
    plan_timing(&mut plan, a, embedded);
    plan.timeout = a.timeout;
    plan.connect_timeout = a.connect_timeout;
    plan.pool.checkout_timeout = a.checkout_timeout;
    plan.pool.fail_on_nested = a.fail_on_nested;
    plan.nested = a.nested;
    plan.think_time = a.think_time;
    plan.shard = a.shard;
    plan.start_at = a.start_at.clone();
    plan.slot = a.slot;
    plan.pipeline = a.pipeline;
    plan.slo = a.slo.clone();
    plan.stop_on_slo = a.stop_on_slo;
    plan.hdr_intervals = a.views.hdr_log.is_some();
    if let Some(ramp) = &a.ramp {
        // Closed loop: as many workers as the peak; open: the rate ramps,
        // the in-flight cap stays.
        if plan.load == LoadModel::Closed {
            plan.concurrency = vec![ramp.peak().ceil() as usize];
        }
        plan.duration = ramp.total();
        plan.ramp = Some(ramp.clone());
    }
    plan.target_options = a.request.target_options();
    plan.target_options.fill_query_mode(&plan.target.scheme);
    plan_load(&mut plan, a);
    plan.pool.min_idle = a.min_idle;
    plan.threads = load_threads(a.threads, &plan);
    plan
}

/// The strategies, concurrencies and pool sizes: as asked, else the defaults.
fn plan_grid(plan: &mut Plan, a: &RunArgs, embedded: bool) {
    if !a.strategy.is_empty() {
        plan.strategies = a.strategy.clone();
    } else if embedded {
        plan.strategies = EMBEDDED_STRATEGIES.to_vec();
    }
    if !a.concurrency.is_empty() {
        plan.concurrency = a.concurrency.clone();
    }
    if !a.pool_sizes.is_empty() {
        plan.pool_sizes = a.pool_sizes.clone();
    }
}

/// Each cell's warm-up, measured time, request count (-n) and runs.
fn plan_timing(plan: &mut Plan, a: &RunArgs, embedded: bool) {
    // The built-in server's default grid: three short runs per cell, so
    // every figure comes with a confidence interval.
    let default_grid = embedded && a.duration.is_none() && a.requests.is_none() && a.ramp.is_none();
    let (duration, warmup) = match embedded {
        true => (Duration::from_millis(500), Duration::from_millis(250)),
        false => (plan.duration, plan.warmup),
    };
    plan.duration = match (a.duration, a.requests) {
        (Some(d), _) => d,
        (None, Some(_)) => Duration::from_secs(600),
        (None, None) => duration,
    };
    plan.warmup = a.warmup.unwrap_or(warmup);
    plan.requests = a.requests;
    plan.reps = a.reps.unwrap_or(if default_grid { 3 } else { 1 });
}

/// The load model: open with `--rate` (a ramp's peak rate), batches with `--batch`.
fn plan_load(plan: &mut Plan, a: &RunArgs) {
    if let Some(rate) = a.rate {
        let arrival = match a.arrival {
            ArrivalArg::Constant => Arrival::Constant,
            ArrivalArg::Poisson => Arrival::Poisson,
        };
        plan.load = LoadModel::Open { rate, arrival };
        plan.concurrency = vec![a.max_inflight];
    }
    if let (Some(ramp), LoadModel::Open { arrival, .. }) = (&a.ramp, plan.load) {
        plan.load = LoadModel::Open {
            rate: ramp.peak(),
            arrival,
        };
    }
    if let Some(size) = a.batch {
        plan.load = LoadModel::Batch {
            size,
            samples: a.samples,
        };
    }
}

/// The load threads asked for; by default the cores, and for an open loop
/// only as many as its rate (this shard's share) needs: each sender paces
/// its share on its own thread, and one more only adds wake-ups.
fn load_threads(asked: Option<usize>, plan: &Plan) -> usize {
    match (asked, plan.load) {
        (Some(n), _) => n,
        (None, LoadModel::Open { rate, .. }) => {
            let shards = plan.shard.map_or(1, |s| s.count) as f64;
            LoadModel::open_threads(rate / shards, plan.threads)
        }
        (None, _) => plan.threads,
    }
}

fn embedded_config(a: &RunArgs) -> ServerConfig {
    ServerConfig {
        listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        delay: a
            .server_delay
            .unwrap_or(DelaySpec::Fixed(Duration::from_millis(1))),
        fail_rate: a.server_fail_rate,
        max_inflight: a.server_max_inflight,
        ..ServerConfig::default()
    }
}

pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The built-in server's counters, read in-process.
struct BuiltinCounters(Arc<Counters>);

impl CounterReader for BuiltinCounters {
    fn reset(&self) {
        self.0.reset();
    }
    fn read(&self) -> ServerCounters {
        self.0.snapshot().into()
    }
}
