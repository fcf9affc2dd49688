//! The generator-saturated finding, from the CPU the run measures: its
//! process's and the machine's. Runs take turns (`common::run_with`), so
//! no other run of this binary shares the process's CPU.
use crate::common::*;
use poolbench_model::{Plan, RunResult};
use poolbench_server::{EmbeddedServer, ServerConfig};
use poolbench_targets::TargetSpec;
use std::time::Duration;

/// A run against a built-in server with as many threads as cores, by a
/// caller holding its turn.
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
    run_in_turn(&server, &plan)
}

/// Threads of this process spinning on every core until dropped: the
/// process, and so the machine, saturated whatever else the machine does.
struct Spin {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Spin {
    fn every_core() -> Spin {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Spin { stop, threads }
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn generator_saturated_only_when_the_cpu_is() {
    // A connection per request, no delay, c=64, with the process's own
    // threads spinning on every core: the process fills the cores. (The
    // run alone came to 0.89 of a busy machine once, under the 0.9 the
    // finding asks: the threshold is the analysis's, tested there.)
    let _turn = turn();
    let with = {
        let _spin = Spin::every_core();
        run_on_all_cores(ServerConfig::default(), "per-request", 64)
    };
    // 20 ms per request at c=4: the machine idles.
    let without = run_on_all_cores(delay("20ms"), "pool:4", 4);
    let cpu = |r: &RunResult| (r.cells[0].generator_cpu, r.cells[0].machine_cpu);
    eprintln!("cpu with {:?}, without {:?}", cpu(&with), cpu(&without));
    flagged_only_in("generator-saturated", &with, &without);
}
