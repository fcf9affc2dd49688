#![allow(dead_code)]
use poolbench_engine::{run, CellResult, NoEvents, Plan, RunResult, ServerCounters, ServerProbe};
use poolbench_pool::StrategySpec;
use poolbench_server::{EmbeddedServer, ServerConfig, Stats};
use poolbench_targets::TargetSpec;
use std::sync::Arc;
use std::time::Duration;

/// The built-in server's counters, read in-process.
pub struct Probe(pub Arc<Stats>);

impl ServerProbe for Probe {
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

/// Run `plan` against `server` with its counters as the probe.
pub fn run_with(server: &EmbeddedServer, plan: &Plan) -> RunResult {
    let probe = Probe(server.stats());
    run(plan, Some(&probe), &NoEvents).expect("run completes")
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
