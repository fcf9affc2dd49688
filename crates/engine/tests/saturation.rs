//! The generator-saturated finding: alone in its test binary, so other
//! tests running in parallel do not load the CPU it measures.
use crate::common::*;
use poolbench_model::{Plan, RunResult};
use poolbench_server::{EmbeddedServer, ServerConfig};
use poolbench_targets::TargetSpec;
use std::time::Duration;

/// A run against a built-in server with as many threads as cores.
fn run_on_all_cores(config: ServerConfig, strategy: &str, c: usize) -> RunResult {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..config
    };
    let server = EmbeddedServer::start(config, cores).expect("server starts");
    let mut plan = Plan::new(TargetSpec::http(server.addr(), "/"));
    plan.strategies = strategies(strategy);
    plan.concurrency = vec![c];
    plan.warmup = Duration::from_millis(300);
    plan.duration = Duration::from_secs(2);
    run_with(&server, &plan)
}

#[test]
fn generator_saturated_only_when_the_cpu_is() {
    // A connection per request, no delay, c=64: generator, built-in server
    // and the kernel's connection handling fill the cores.
    let with = run_on_all_cores(ServerConfig::default(), "per-request", 64);
    // 20 ms per request at c=4: the machine idles.
    let without = run_on_all_cores(delay("20ms"), "pool:4", 4);
    let cpu = |r: &RunResult| (r.cells[0].generator_cpu, r.cells[0].machine_cpu);
    eprintln!("cpu with {:?}, without {:?}", cpu(&with), cpu(&without));
    flagged_only_in("generator-saturated", &with, &without);
}
