//! Live metrics scraped by a real Prometheus (the OS package, started by
//! `scripts/services.sh prometheus-start` on a free loopback port,
//! scraping every second) and read back through its HTTP API: a run's
//! request total as Prometheus saw it is the run's JSON total, and three
//! shards' totals add up in one PromQL `sum`, each within one scrape
//! interval's worth of requests.
use crate::live_metrics::{free_addr, Prometheus, Watched, BIN};
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

/// Each series' last value however stale (the runs have ended), summed.
const TOTAL: &str = "sum(max_over_time(poolbench_requests_total[10m]))";

/// Requests in one scrape interval (1 s) at the runs' throughput.
fn one_interval(results: &[Value]) -> f64 {
    results
        .iter()
        .map(|r| {
            let c = &r["cells"][0];
            c["requests"].as_f64().unwrap() / c["duration_s"].as_f64().unwrap()
        })
        .sum()
}

fn requests(results: &[Value]) -> f64 {
    results
        .iter()
        .map(|r| r["cells"][0]["requests"].as_f64().unwrap())
        .sum()
}

/// Prometheus's total is the runs' within one scrape interval, and it saw
/// the totals grow while the runs ran (not one value at the end).
fn check_total(prom: &Prometheus, results: &[Value]) {
    let json = requests(results);
    let scraped = prom.query(TOTAL);
    assert_eq!(scraped.len(), 1, "{scraped:?}");
    let bound = one_interval(results);
    eprintln!(
        "JSON {json} requests, Prometheus {} (bound {bound:.0})",
        scraped[0]
    );
    assert!(json > 0.0);
    assert!(
        scraped[0] <= json && json - scraped[0] <= bound,
        "Prometheus saw {} requests, the runs' JSON {json} (bound {bound:.0})",
        scraped[0]
    );
    for changes in prom.query("changes(poolbench_requests_total[10m])") {
        assert!(changes >= 3.0, "the total grew in only {changes} scrapes");
    }
}

#[test]
fn prometheus_sees_the_runs_request_total() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Prometheus first: it takes seconds to begin scraping a new target.
    let metrics = free_addr();
    let prom = Prometheus::start("run", &[&metrics]);
    prom.wait_for_targets(1);
    let args = [
        "run",
        "-s",
        "pool:4",
        "-c",
        "8",
        "-d",
        "6s",
        // Scraped while it runs: no thread comparison before the cell.
        "--threads",
        "2",
        "--warmup",
        "500ms",
        "--server-delay",
        "5ms",
        "--metrics-linger",
        "3s",
        "--format",
        "json",
        "--quiet",
    ];
    let result = Watched::start_on(&args, &metrics).json();
    check_total(&prom, &[result]);
    let scrapes = prom.scrapes("10m");
    assert!(scrapes[0] >= 5.0, "only {scrapes:?} scrapes");
}

/// `poolbench serve` (stopped by PID when dropped) and its address.
struct Serve(Child, String);

impl Serve {
    fn start() -> Serve {
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--delay", "5ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line.trim().strip_prefix("http ").unwrap().to_string();
        Serve(child, addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn three_shards_add_up_in_one_promql_sum() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let server = Serve::start();
    let target = format!("http://{}/", server.1);
    let addrs: Vec<String> = (0..3).map(|_| free_addr()).collect();
    let targets: Vec<&str> = addrs.iter().map(String::as_str).collect();
    let prom = Prometheus::start("shards", &targets);
    prom.wait_for_targets(3);
    let start = SystemTime::now() + Duration::from_secs(3);
    let start_at = humantime::format_rfc3339_seconds(start).to_string();
    let shards: Vec<Watched> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            let args = [
                "run",
                &target,
                "-s",
                "pool:6",
                "-c",
                "6",
                "-d",
                "4s",
                "--warmup",
                "500ms",
                "--shard",
                &shard,
                "--start-at",
                &start_at,
                "--metrics-linger",
                "3s",
                "--format",
                "json",
                "--quiet",
            ];
            Watched::start_on(&args, &addrs[i])
        })
        .collect();
    let results: Vec<Value> = shards.into_iter().map(Watched::json).collect();
    check_total(&prom, &results);
    // One series per shard, each labelled with its index, each its JSON's.
    let by_shard = prom.series("sum by (shard) (max_over_time(poolbench_requests_total[10m]))");
    let mut shards: Vec<(String, f64)> = by_shard
        .iter()
        .map(|(m, v)| (m["shard"].as_str().unwrap_or("").to_string(), *v))
        .collect();
    shards.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<&str> = shards.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["0", "1", "2"], "{by_shard:?}");
    for ((_, scraped), result) in shards.iter().zip(&results) {
        let json = result["cells"][0]["requests"].as_f64().unwrap();
        assert!(*scraped <= json && json - scraped <= one_interval(std::slice::from_ref(result)));
    }
    drop(server);
}
