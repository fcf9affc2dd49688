//! `poolbench tune --find-rate`: the highest open-loop rate the service
//! holds within the SLO (`poolbench_tune::rate`), each point run by the
//! engine, then the answer written and printed.
use crate::args::Format;
use crate::tune_args::TuneArgs;
use crate::tune_cmd::{base_plan, target_of, write};
use crate::tune_search::EngineMeasure;
use crate::Failure;
use poolbench_model::{Family, RateResult, Slo, StrategySpec};
use poolbench_targets::TargetSpec;
use poolbench_tune::rate::{RateSearcher, RateSetup};
use poolbench_tune::WallClock;
use std::path::PathBuf;
use std::time::Duration;

/// Most requests in flight against a database when not told (its own
/// connection limit is often 100).
const DATABASE_MOST: usize = 64;
/// Most requests in flight against anything else when not told.
const MOST: usize = 1024;
/// The warm-up before each hold.
const WARMUP: Duration = Duration::from_millis(500);

pub(crate) fn find_rate(a: TuneArgs) -> Result<(), Failure> {
    if a.fleet.replicas.is_some() {
        return Err(Failure::input(
            "--replicas: a fleet's pools are sized by tune -c C; --find-rate finds the rate one client holds",
        ));
    }
    let slo = slo_of(&a)?;
    check_outputs(&a.output)?;
    let watch = crate::metrics_listen::Watch::start(&a.metrics, "tune")?;
    let (target, server) = target_of(&a)?;
    let fd_limit = crate::limits::raise();
    let most = most_in_flight(&a, &target, fd_limit, server.is_some());
    let strategy = strategy_of(&a, &target, most)?;
    let mut base = base_plan(&a, target.clone());
    base.warmup = WARMUP;
    base.validate().map_err(Failure::input)?;
    crate::signals::watch()
        .map_err(|e| Failure::runtime(format!("cannot watch for Ctrl-C: {e}")))?;
    let setup = RateSetup {
        slo: slo.clone(),
        budget: a.budget,
        recovery: a.recovery,
        strategy,
        most_in_flight: most,
        warmup: WARMUP,
        hold: a.hold,
        threads: a.threads,
    };
    let skeleton = RateResult::begin(
        base.target.redacted(),
        strategy.to_string(),
        slo,
        a.budget.as_secs_f64(),
    );
    let measure = EngineMeasure {
        base,
        quiet: a.quiet,
        live: crate::metrics_listen::LiveOnly(watch.live.clone()),
        reached: false,
        threads_fixed: a.threads.is_some(),
    };
    let mut result = RateSearcher::new(setup, skeleton, measure, WallClock::start()).run()?;
    if let Some(s) = server {
        result.target = format!("built-in server at http://{}/", s.addr());
        s.shutdown();
    }
    write_and_print(&a, &result)?;
    watch.finish();
    verdict(&result)
}

/// The SLO a rate must hold: needed, and made of bounds a rate can break.
fn slo_of(a: &TuneArgs) -> Result<Slo, Failure> {
    let slo = a.slo.clone().ok_or_else(|| {
        Failure::input("--find-rate needs the SLO the rate must hold, e.g. --slo 'p99<50ms'")
    })?;
    if slo.throughput_rps.is_some() {
        return Err(Failure::input(
            "--slo throughput>N: --find-rate finds the rate itself; bound latency (p50, p90, p99, p99.9) or errors",
        ));
    }
    Ok(slo)
}

/// The strategy every point runs: the one -s gives (a family alone gets
/// `most` connections, opened as the rate needs them), or the protocol's
/// default.
fn strategy_of(a: &TuneArgs, target: &TargetSpec, most: usize) -> Result<StrategySpec, Failure> {
    let spec = match a.strategy.as_slice() {
        [] if crate::tune_cmd::multiplexed(a, target) => StrategySpec::Shared,
        [] => StrategySpec::Pool(None),
        [one] => *one,
        _ => {
            return Err(Failure::input(
                "-s: --find-rate holds one strategy; give one (e.g. -s pool or -s pool:24)",
            ))
        }
    };
    if spec.kind().parse::<Family>() == Ok(Family::Pipeline) {
        return Err(Failure::input(
            "-s pipeline: --find-rate sends at a rate; pipelining is sized at a concurrency (tune -c C -s pipeline)",
        ));
    }
    Ok(match spec.needs_size() {
        true => spec.with_size(most),
        false => spec,
    })
}

/// The open loop's cap: --max-pool, or 1,024 (64 for databases), within
/// the descriptors (both ends count against them when the server is
/// built in).
fn most_in_flight(
    a: &TuneArgs,
    target: &TargetSpec,
    fd_limit: Option<u64>,
    embedded: bool,
) -> usize {
    let wanted = match target.protocol().is_sql() {
        true => DATABASE_MOST,
        false => MOST,
    };
    let sides = if embedded { 2 } else { 1 };
    let fds = fd_limit.map_or(usize::MAX, |l| (l.saturating_sub(128) / sides) as usize);
    a.max_pool.unwrap_or(wanted).min(fds).max(1)
}

/// Exit 1 when no rate held, unless a stop cut the search short.
fn verdict(result: &RateResult) -> Result<(), Failure> {
    if result.found.is_some() || crate::signals::exit_code().is_some() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "no rate found: {}",
        result.reason.as_deref().unwrap_or("see the report")
    )))
}

fn write_and_print(a: &TuneArgs, result: &RateResult) -> Result<(), Failure> {
    for path in &a.output {
        write(path, &render(format_of(path)?, result))?;
    }
    let format = Format::from(a.format);
    crate::output::emit(&render(format, result));
    Ok(())
}

pub(crate) fn render(format: Format, r: &RateResult) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(r).expect("a result serializes") + "\n",
        Format::Html => poolbench_report::render_rate_html(r),
        Format::Markdown => poolbench_report::render_rate_markdown(r),
        Format::Junit => poolbench_report::render_junit(&poolbench_report::rate_junit(r)),
        Format::Text | Format::Csv => poolbench_report::render_rate_text(r),
    }
}

/// `poolbench report RATE.json`: a saved rate search read again with this
/// version's conclusions.
pub(crate) fn report(mut r: RateResult, a: &crate::args::ReportArgs) -> Result<(), Failure> {
    poolbench_tune::rate::conclude(&mut r);
    crate::output::rerender(a, |format| render(format, &r))
}

fn format_of(path: &std::path::Path) -> Result<Format, Failure> {
    match crate::output::format_of(path)? {
        f @ (Format::Json | Format::Html | Format::Text | Format::Markdown | Format::Junit) => {
            Ok(f)
        }
        Format::Csv => Err(Failure::input(format!(
            "-o {}: --find-rate writes .json, .html, .md, .xml (JUnit) or .txt",
            path.display()
        ))),
    }
}

fn check_outputs(outputs: &[PathBuf]) -> Result<(), Failure> {
    crate::output::check(outputs)?;
    outputs.iter().try_for_each(|p| format_of(p).map(|_| ()))
}
