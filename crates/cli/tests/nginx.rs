//! nginx (the OS package, started by scripts/services.sh) as the target:
//! HTTP/1.1 and h2c against a server nobody here wrote, and its own
//! connection counters (stub_status) agreeing with what poolbench reports.
use crate::services::{nginx_urls, run_json};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;

/// nginx's accepted connections so far (this request's own included).
fn accepted(http_url: &str) -> u64 {
    let addr = http_url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /nginx_status HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    // "server accepts handled requests\n A H R"
    let line = answer
        .lines()
        .skip_while(|l| !l.starts_with("server accepts"))
        .nth(1)
        .unwrap_or_else(|| panic!("no counters in {answer}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

/// The tests share one nginx and count its connections: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// 40 requests a cell, not a window: on a busy machine a 500 ms window
/// once passed before round-robin:2's first answer from nginx. The 20 s
/// is a hang guard.
fn run(url: &str, strategies: &str, c: &str) -> Value {
    run_json(&[
        "run", url, "-s", strategies, "-c", c, "-n", "40", "-d", "20s", "--warmup", "0s",
    ])
}

fn no_errors(r: &Value) {
    for c in r["cells"].as_array().unwrap() {
        assert!(c["requests"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(
            c["errors"]["total"], 0,
            "{}: {}",
            c["strategy"], c["errors"]
        );
    }
}

/// Connections nginx accepted during `run` (besides the counter reads).
fn opened_during(http_url: &str, run: impl FnOnce() -> Value) -> (u64, Value) {
    let before = accepted(http_url);
    let r = run();
    let after = accepted(http_url);
    (after - before - 1, r)
}

#[test]
fn every_strategy_runs_against_nginx_over_http1_and_h2c() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (h1, h2c) = nginx_urls();
    no_errors(&run(
        &h1,
        "per-request,shared,round-robin:2,least-loaded:2,pool:2,elastic:2+1,take-or-create:2,partitioned:2x1",
        "4",
    ));
    no_errors(&run(
        &h2c,
        "shared,round-robin:2,least-loaded:2,pool:2",
        "8",
    ));
}

#[test]
fn nginx_counts_the_connections_poolbench_says_it_opened() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (h1, h2c) = nginx_urls();
    // One connection per request, as nginx saw it: those poolbench says it
    // opened, and its reachability check and one look for a poolbench
    // server's counters.
    let (opened, r) = opened_during(&h1, || run(&h1, "per-request", "2"));
    let cell = &r["cells"][0];
    let requests = cell["requests"].as_u64().unwrap();
    assert!(
        opened >= requests,
        "{opened} accepted for {requests} requests"
    );
    // nginx may also have accepted the connects still under way when the
    // cell ended (one per worker at most), which poolbench never finished.
    let said = cell["connections"]["opened"].as_u64().unwrap() + 2;
    assert!(
        (said..=said + 2).contains(&opened),
        "nginx {opened}, poolbench {said}"
    );
    // A pool of 3 opens at most 3, and the same two.
    let (opened, r) = opened_during(&h1, || run(&h1, "pool:3", "6"));
    no_errors(&r);
    assert!(opened <= 3 + 2, "{opened} accepted for pool:3");
    // h2c multiplexes c=16 over one shared connection (nginx counts both
    // ports together): that one, and at most the run's own few checks.
    let (opened, r) = opened_during(&h1, || run(&h2c, "shared", "16"));
    no_errors(&r);
    assert_eq!(r["cells"][0]["connections"]["opened"], 1);
    assert!(
        opened <= 1 + 3,
        "{opened} accepted for one shared connection"
    );
}
