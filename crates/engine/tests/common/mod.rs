#![allow(dead_code)]
use poolbench_engine::{run, CounterReader, NoEvents};
use poolbench_model::StrategySpec;
use poolbench_model::{CellResult, Plan, RunResult, ServerCounters};
use poolbench_server::{Counters, EmbeddedServer, ServerConfig};
use poolbench_targets::TargetSpec;
use std::sync::Arc;
use std::time::Duration;

/// The built-in server's counters, read in-process.
pub struct Reader(pub Arc<Counters>);

impl CounterReader for Reader {
    fn reset(&self) {
        self.0.reset();
    }
    fn read(&self) -> ServerCounters {
        let s = self.0.snapshot();
        ServerCounters {
            connections_accepted: s.connections_accepted,
            connections_open: s.connections_open,
            connections_peak: s.connections_peak,
            requests: s.requests,
            inflight_peak: s.inflight_peak,
            service_ns_total: s.service_ns_total,
            db_pool: None,
        }
    }
}

/// A built-in server on port 0 with `config`, and a plan aimed at it.
pub fn server(config: ServerConfig) -> (EmbeddedServer, Plan) {
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..config
    };
    let server = EmbeddedServer::start(config, 1).expect("server starts");
    let mut plan = Plan::new(TargetSpec::http(server.addr(), "/"));
    plan.warmup = Duration::ZERO;
    plan.duration = Duration::from_secs(1);
    plan.pool_sizes = vec![];
    (server, plan)
}

pub fn strategies(list: &str) -> Vec<StrategySpec> {
    list.split(',').map(|s| s.parse().unwrap()).collect()
}

/// Runs in one test binary take turns: timing-sensitive checks must not
/// share the two cores with another run.
static ONE_RUN_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Run `plan` against `server` with its counters read around each cell, and
/// analyze the result as every command does.
pub fn run_with(server: &EmbeddedServer, plan: &Plan) -> RunResult {
    let _turn = turn();
    run_in_turn(server, plan)
}

/// This test's turn to run: no other run shares the machine until the
/// guard drops.
pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_RUN_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`run_with`] for a caller that holds its [`turn`] already.
pub fn run_in_turn(server: &EmbeddedServer, plan: &Plan) -> RunResult {
    let reader = Reader(server.stats());
    let mut result = run(plan, Some(&reader), &NoEvents).expect("run completes");
    poolbench_analysis::analyze(&mut result);
    result
}

pub fn cell<'a>(result: &'a RunResult, strategy: &str, c: usize) -> &'a CellResult {
    result
        .cells
        .iter()
        .find(|x| x.strategy == strategy && x.concurrency == c)
        .unwrap_or_else(|| panic!("no cell {strategy} c={c}"))
}

pub fn within(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= expected * tolerance
}

/// The ids of the findings a run reports.
pub fn finding_ids(result: &RunResult) -> Vec<String> {
    result.findings.iter().map(|p| p.id.to_string()).collect()
}

/// Assert `id` is reported by `with` and not by `without`.
pub fn flagged_only_in(id: &str, with: &RunResult, without: &RunResult) {
    let known: poolbench_model::findings::Id = id.parse().expect("a finding's id");
    let yes = finding_ids(with);
    let no = finding_ids(without);
    assert!(yes.iter().any(|p| p == id), "{id} not reported: {yes:?}");
    assert!(
        !no.iter().any(|p| p == id),
        "{id} reported where it does not apply: {:?}",
        without.findings
    );
    let p = with.findings.iter().find(|p| p.id == known).unwrap();
    assert!(!p.evidence.is_empty(), "{id} without evidence");
}

/// A short plan against a fresh built-in server with `config`.
pub fn quick(config: ServerConfig, strategies_list: &str, c: &[usize]) -> (EmbeddedServer, Plan) {
    let (s, mut plan) = server(config);
    plan.strategies = strategies(strategies_list);
    plan.concurrency = c.to_vec();
    plan.warmup = Duration::from_millis(200);
    plan.duration = Duration::from_secs(1);
    (s, plan)
}

/// Run a quick plan (see [`quick`]).
pub fn quick_run(
    config: ServerConfig,
    strategies_list: &str,
    c: &[usize],
    tweak: impl FnOnce(&mut Plan),
) -> RunResult {
    let (s, mut plan) = quick(config, strategies_list, c);
    tweak(&mut plan);
    run_with(&s, &plan)
}

pub fn delay(d: &str) -> ServerConfig {
    ServerConfig {
        delay: d.parse().unwrap(),
        ..ServerConfig::default()
    }
}
