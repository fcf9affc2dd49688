//! Network faults between poolbench and its target, made by a real chaos
//! proxy: Shopify's toxiproxy (scripts/setup.sh builds it, scripts/
//! services.sh starts it: POOLBENCH_TOXIPROXY_URL), driven through its
//! HTTP API. Each fault is applied from 2 s to 5 s of an 8 s run (a
//! stall counts from 2 s, so the window is longer than that); the run
//! must end on time with a whole result, count the errors by their kind
//! and name what happened.
//!
//! The runs send at a fixed rate (`paced`), not as fast as they can:
//! what a fault shows is the rate's fall in its window and its return
//! after, which a few thousand requests a second show as well as the
//! machine's whole speed, and light runs can share the machine with each
//! other (scripts/test.sh runs this binary's faults many at a time).
use crate::services::Serve;
pub(crate) use crate::toxiproxy::Proxy;
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

/// The run: 8 s, at most 8 requests in flight on 8 connections, 1 s
/// timeouts.
const RUN_S: f64 = 8.0;

/// What each run of `under` sends: 1,000 requests a second (an open
/// loop over 8 connections), far above what any fault lets through in
/// its window (100 ms of latency: 80/s on 8 connections; 1 KB/s a
/// connection: under 20 answers a second each) and far below what the
/// machine can send: six runs at 2,000 through toxiproxy kept the machine
/// 98% busy beside the other test lanes. Redis's answer to its default PING is 7 bytes, which
/// 1 KB/s lets through 140 times a second a connection, so Redis echoes
/// 200 bytes instead.
fn paced(url: &str) -> Vec<&'static str> {
    let mut args = vec!["--rate", "1000", "--max-inflight", "8"];
    if url.starts_with("redis") {
        args.extend(["--command", ECHO_200]);
    }
    args
}

/// A Redis command whose answer is 200 bytes.
const ECHO_200: &str = "ECHO 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";

/// The fault's window, seconds from the process's start.
const FAULT: (f64, f64) = (2.0, 5.0);

mod faulted;
use faulted::{unix_now, Faulted};

/// `run URL` for 8 s with the fault `toxic` from 2 s to 5 s, sent at
/// `paced(url)`.
fn under(url: &str, proxy: &Proxy, toxic: &str, attributes: Value) -> Faulted {
    let load = [paced(url), vec!["--timeout", timeout_for(toxic)]].concat();
    under_toxic(url, proxy, toxic, attributes, &load)
}

/// `run URL` with `load`, the toxic on from 2 s to 5 s.
fn under_toxic(url: &str, proxy: &Proxy, toxic: &str, attributes: Value, load: &[&str]) -> Faulted {
    let name = format!("{}-{toxic}", proxy.name);
    under_with(
        url,
        &name,
        || proxy.add(toxic, attributes),
        || proxy.remove(),
        load,
        LOGIN_TIMEOUT,
    )
}

/// The request timeout of a paced run under `toxic`. Faults that should
/// cost no request (latency, answers in pieces, a lingering close) get
/// 3 s, so that a busy machine's stall of a second is not read as the
/// fault's error (seen once: five 1 s timeouts beside a `yes`); the
/// others keep 1 s, by which their errors and windows are judged.
fn timeout_for(toxic: &str) -> &'static str {
    match toxic {
        "latency" | "slicer" | "slow_close" => "3s",
        _ => "1s",
    }
}

/// As `under`, with 8 workers in a closed loop: a half-open connection
/// is a stall (requests in flight, none answered), which only a closed
/// loop holds for the whole window (an open one's late requests are
/// dropped, and the window reads as an outage). No think time: a worker
/// thinking between a timeout and its next request leaves a moment with
/// nothing in flight, which splits the stall (seen on Redis, with 5 ms).
fn under_closed(url: &str, proxy: &Proxy, toxic: &str, attributes: Value) -> Faulted {
    under_toxic(
        url,
        proxy,
        toxic,
        attributes,
        // Closed loop at fixed fault times: no thread comparison first.
        &["-c", "8", "--timeout", "1s", "--threads", "2"],
    )
}

/// The connect timeout of a run through a proxy: the proxy and a
/// database's login share the machine with the other runs, and
/// PostgreSQL's once took 3.5 s on a busy one. The faults show in the
/// requests' 1 s timeouts.
const LOGIN_TIMEOUT: &str = "5s";

/// `run URL` for 8 s, `on` called at 2 s and `off` at 5 s; the run must
/// exit 0 on time, with the same whole result on stdout and in `-o`.
/// It waits for a connection at most `connect_timeout`.
fn under_with(
    url: &str,
    name: &str,
    on: impl FnOnce(),
    off: impl FnOnce(),
    extra: &[&str],
    connect_timeout: &str,
) -> Faulted {
    let dir = std::env::temp_dir().join(format!("poolbench-fault-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("result.json");
    let mut run = Command::new(env!("CARGO_BIN_EXE_poolbench"));
    run.args(["run", url, "-s", "pool:8", "-d", "8s", "--warmup", "0s"])
        .args(["--connect-timeout", connect_timeout])
        .arg("--quiet")
        .args(["--format", "json", "-o", saved.to_str().unwrap()])
        .args(extra);
    let started = Instant::now();
    let child = run
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs_f64(FAULT.0));
    on();
    let on_unix_s = unix_now();
    std::thread::sleep(Duration::from_secs_f64(FAULT.1 - FAULT.0));
    off();
    let fault_unix_s = (on_unix_s, unix_now());
    let out = child.wait_with_output().unwrap();
    let wall_s = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: stdout is no result ({e}): {stderr}"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap())
        .unwrap_or_else(|e| panic!("{name}: -o is no whole result: {e}"));
    assert_eq!(file["cells"][0]["requests"], result["cells"][0]["requests"]);
    let _ = std::fs::remove_dir_all(&dir);
    // On time: the run, a request's timeout, and the start, with room for
    // a busy machine; a connection the fault holds half-open must not
    // hold the end.
    assert!(wall_s <= RUN_S + 6.0, "{name}: {wall_s:.1} s");
    Faulted {
        result,
        wall_s,
        fault_unix_s,
    }
}

/// The built-in server behind a proxy of its own.
pub(crate) fn http_target(name: &str) -> (Serve, Proxy) {
    let serve = Serve::start(&["--delay", "2ms"]);
    let proxy = Proxy::new(name, &serve.addr);
    (serve, proxy)
}

#[test]
fn http1_latency_with_jitter_shows_in_the_tail_without_errors() {
    let (_serve, proxy) = http_target("latency");
    let url = format!("http://{}/", proxy.listen);
    let f = under(
        &url,
        &proxy,
        "latency",
        json!({"latency": 200, "jitter": 50}),
    );
    assert_eq!(f.total_errors(), 0, "{}", f.trail());
    // A third of the time, but far fewer of the requests: the slowest.
    let max = f.cell()["latency_us"]["max"].as_f64().unwrap();
    assert!(max >= 150_000.0, "max {max} µs: {}", f.trail());
    // Slower in the window, as fast again after.
    f.assert_slowed_below(0.5, "the fault");
    f.assert_recovered("the fault");
}

#[test]
fn http1_half_open_connections_time_out_and_are_a_stall_in_the_window() {
    let (_serve, proxy) = http_target("timeout");
    let url = format!("http://{}/", proxy.listen);
    // timeout 0: the data stops and the connection stays open.
    let f = under_closed(&url, &proxy, "timeout", json!({"timeout": 0}));
    assert!(f.errors("timeout") >= 8, "{}", f.trail());
    assert!(f.finding("stall").is_some(), "{}", f.trail());
    f.assert_stall_in_the_window();
    f.assert_slowed_below(0.1, "the fault");
    f.assert_recovered("the fault");
}

#[test]
fn http1_reset_peer_is_counted_as_resets_and_the_pool_reconnects() {
    let (_serve, proxy) = http_target("reset");
    let url = format!("http://{}/", proxy.listen);
    let f = under(&url, &proxy, "reset_peer", json!({"timeout": 0}));
    assert!(f.errors("reset") >= 1, "{}", f.trail());
    assert!(f.finding("errors").is_some(), "{}", f.trail());
    f.assert_recovered("the fault");
    let opened = f.cell()["connections"]["opened"].as_u64().unwrap();
    assert!(opened > 8, "the pool reopened nothing: {}", f.trail());
}

#[test]
fn http1_connections_cut_after_some_bytes_are_errors_and_reconnects() {
    let (_serve, proxy) = http_target("limit");
    let url = format!("http://{}/", proxy.listen);
    let f = under(&url, &proxy, "limit_data", json!({"bytes": 2000}));
    assert!(f.total_errors() >= 1, "{}", f.trail());
    let kinds = &f.cell()["errors"]["by_kind"];
    assert!(
        kinds
            .as_object()
            .unwrap()
            .keys()
            .all(|k| ["reset", "protocol", "timeout"].contains(&k.as_str())),
        "{}",
        f.trail()
    );
    let opened = f.cell()["connections"]["opened"].as_u64().unwrap();
    assert!(opened > 8, "{}", f.trail());
}

#[test]
fn http1_fragmented_and_slow_closed_answers_are_read_whole() {
    let (_serve, proxy) = http_target("slicer");
    let url = format!("http://{}/", proxy.listen);
    // Answers in 1-19 byte pieces 200 µs apart: parsed whole, no error.
    let f = under(
        &url,
        &proxy,
        "slicer",
        json!({"average_size": 10, "size_variation": 9, "delay": 200}),
    );
    assert_eq!(f.total_errors(), 0, "{}", f.trail());
    let (_serve2, proxy2) = http_target("slow-close");
    let url = format!("http://{}/", proxy2.listen);
    let f = under(&url, &proxy2, "slow_close", json!({"delay": 3000}));
    assert_eq!(f.total_errors(), 0, "{}", f.trail());
}

#[test]
fn http1_a_bandwidth_cap_slows_the_window_and_nothing_else() {
    let (_serve, proxy) = http_target("bandwidth");
    let url = format!("http://{}/", proxy.listen);
    // 2 KB/s for answers of about 130 bytes each, 8 connections.
    let f = under(&url, &proxy, "bandwidth", json!({"rate": 2}));
    f.assert_slowed_below(0.2, "the fault");
    f.assert_recovered("the fault");
}

/// `url` with its host:port replaced by a proxy of its own in front.
pub(crate) fn behind_proxy(url: &str, name: &str) -> (Proxy, String) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, hostpath) = match rest.rsplit_once('@') {
        Some((a, h)) => (format!("{a}@"), h),
        None => (String::new(), rest),
    };
    let (hostport, path) = hostpath.split_once('/').unwrap_or((hostpath, ""));
    let proxy = Proxy::new(name, hostport);
    let proxied = format!("{scheme}://{auth}{}/{path}", proxy.listen);
    (proxy, proxied)
}

/// The two faults every protocol meets: a half-open connection (timeouts,
/// a stall in the fault's window) and a reset (resets); each recovered
/// from after the window.
pub(crate) fn half_open_then_reset(url: &str, proxy: &Proxy) {
    let f = under_closed(url, proxy, "timeout", json!({"timeout": 0}));
    assert!(f.errors("timeout") >= 1, "{}", f.trail());
    assert!(f.finding("stall").is_some(), "{}", f.trail());
    f.assert_stall_in_the_window();
    f.assert_recovered("the fault");
    let f = under_closed(url, proxy, "reset_peer", json!({"timeout": 0}));
    assert!(f.errors("reset") >= 1, "{}", f.trail());
    f.assert_recovered("the fault");
}

#[test]
fn postgres_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (proxy, url) = behind_proxy(&crate::services::pg_url(), "pg");
    half_open_then_reset(&url, &proxy);
    let f = under(
        &url,
        &proxy,
        "latency",
        json!({"latency": 100, "jitter": 20}),
    );
    assert_eq!(f.total_errors(), 0, "{}", f.trail());
    f.assert_slowed_below(0.5, "the fault");
}

#[test]
fn redis_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (proxy, url) = behind_proxy(&crate::services::redis_url(), "redis");
    half_open_then_reset(&url, &proxy);
    let f = under(
        &url,
        &proxy,
        "slicer",
        json!({"average_size": 3, "size_variation": 2, "delay": 100}),
    );
    // Read whole: no protocol error, no reset. A machine that stalls for
    // a second (seen, with nothing answered for 1 s) may time out a
    // request on each connection, and only that.
    f.assert_only(&["timeout"]);
    assert!(f.errors("timeout") <= 8, "{}", f.trail());
}

#[test]
fn h2c_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (_serve, proxy) = http_target("h2c");
    let url = format!("h2c://{}/", proxy.listen);
    half_open_then_reset(&url, &proxy);
}

#[test]
fn mysql_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (proxy, url) = behind_proxy(&crate::services::mysql_url(), "mysql");
    half_open_then_reset(&url, &proxy);
}

#[test]
fn a_full_listen_queue_before_the_run_is_unreachable_in_one_line() {
    // The target's accept queue is full (a backlog of 0, never accepted):
    // SYNs go unanswered. poolbench's reachability check meets it before
    // any load: one line naming the timeout, exit 2, within a few
    // connect timeouts (seen: 3.0 s at 1 s).
    let full = crate::support::PortServer::start("full_backlog.py", &[]);
    let url = format!("http://127.0.0.1:{}/", full.port);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", &url, "-c", "4", "-s", "pool:4", "-d", "3s"])
        .args(["--connect-timeout", "1s", "--quiet", "--format", "json"])
        .output()
        .unwrap();
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(wall <= 3.0 * 1.0 + 1.5, "{wall:.1} s");
}

/// The faults besides half-open and reset, as any protocol meets them; each
/// run ends on time with a whole result (`under`), and:
pub(crate) fn the_rest_of_the_matrix(url: &str, proxy: &Proxy) {
    // 100 ms ± 20 of latency: slower in the window, no errors, fast after.
    let f = under(url, proxy, "latency", json!({"latency": 100, "jitter": 20}));
    assert_eq!(f.total_errors(), 0, "latency: {}", f.trail());
    f.assert_slowed_below(0.5, "latency");
    f.assert_recovered("latency");
    // 1 KB/s a connection: the window crawls, a slow answer is a timeout
    // and nothing else, and it is over after.
    let f = under(url, proxy, "bandwidth", json!({"rate": 1}));
    f.assert_slowed_below(0.3, "bandwidth");
    f.assert_only(&["timeout"]);
    f.assert_recovered("bandwidth");
    // A close that lingers 3 s: nothing closes mid-run, and the run's end
    // does not wait for it (`under`'s bound).
    let f = under(url, proxy, "slow_close", json!({"delay": 3000}));
    assert_eq!(f.total_errors(), 0, "slow_close: {}", f.trail());
    // Each connection cut after 2,000 bytes: resets (or a cut answer, or
    // a timeout), connections opened again, and the errors' window named.
    let f = under(url, proxy, "limit_data", json!({"bytes": 2000}));
    assert!(f.total_errors() >= 1, "limit_data: {}", f.trail());
    f.assert_only(&["reset", "protocol", "timeout"]);
    f.assert_errors_in_the_window();
    let opened = f.cell()["connections"]["opened"].as_u64().unwrap();
    assert!(opened > 8, "limit_data: nothing reopened: {}", f.trail());
    f.assert_recovered("limit_data");
    // Answers in 1-19 byte pieces 200 µs apart: read whole, no error.
    let f = under(
        url,
        proxy,
        "slicer",
        json!({"average_size": 10, "size_variation": 9, "delay": 200}),
    );
    assert_eq!(f.total_errors(), 0, "slicer: {}", f.trail());
}

#[test]
fn h2c_meets_the_rest_of_the_matrix() {
    let (_serve, proxy) = http_target("h2c-matrix");
    the_rest_of_the_matrix(&format!("h2c://{}/", proxy.listen), &proxy);
}

/// The built-in server's gRPC listener behind a proxy of its own.
fn grpc_target(name: &str) -> (Serve, Proxy, String) {
    let serve = Serve::start_listening(&["--delay", "2ms", "--grpc-listen", "127.0.0.1:0"], 2);
    let proxy = Proxy::new(name, &serve.listener("grpc"));
    let url = format!("grpc://{}/", proxy.listen);
    (serve, proxy, url)
}

#[test]
fn grpc_half_open_and_reset_are_timeouts_and_resets_then_recovered() {
    let (_serve, proxy, url) = grpc_target("grpc");
    half_open_then_reset(&url, &proxy);
}

#[test]
fn grpc_meets_the_rest_of_the_matrix() {
    let (_serve, proxy, url) = grpc_target("grpc-matrix");
    the_rest_of_the_matrix(&url, &proxy);
}

#[test]
fn postgres_meets_the_rest_of_the_matrix() {
    let (proxy, url) = behind_proxy(&crate::services::pg_url(), "pg-matrix");
    the_rest_of_the_matrix(&url, &proxy);
}

#[test]
fn mysql_meets_the_rest_of_the_matrix() {
    let (proxy, url) = behind_proxy(&crate::services::mysql_url(), "mysql-matrix");
    the_rest_of_the_matrix(&url, &proxy);
}

#[test]
fn redis_meets_the_rest_of_the_matrix() {
    let (proxy, url) = behind_proxy(&crate::services::redis_url(), "redis-matrix");
    the_rest_of_the_matrix(&url, &proxy);
}

#[test]
fn a_listen_queue_that_fills_mid_run_is_a_stall_in_its_window() {
    // From 2 s to 5 s the server drops its connections and accepts none:
    // its queue (a backlog of 0) is full, new SYNs go unanswered, every
    // reconnect waits for its 1 s connect timeout. Nothing is refused or
    // reset (a closed idle connection is reopened, its request sent
    // again), so it is a stall of timeouts, with the server's closes in
    // `reconnects`, not an outage.
    let server = std::cell::RefCell::new(crate::support::PortServer::start("queue_fills.py", &[]));
    let url = format!("http://127.0.0.1:{}/", server.borrow().port);
    let f = under_with(
        &url,
        "queue-fills",
        || server.borrow_mut().say("full"),
        || server.borrow_mut().say("open"),
        // Closed loop at fixed fault times: no thread comparison first.
        &["-c", "8", "--timeout", "1s", "--threads", "2"],
        "1s",
    );
    assert!(f.errors("timeout") >= 8, "{}", f.trail());
    f.assert_only(&["timeout", "reset"]);
    assert!(f.finding("stall").is_some(), "{}", f.trail());
    f.assert_stall_in_the_window();
    let reconnects = f
        .finding("reconnects")
        .unwrap_or_else(|| panic!("no reconnects: {}", f.trail()));
    let line = reconnects["evidence"][0].as_str().unwrap();
    assert!(line.contains("by the server"), "{line}");
    f.assert_recovered("the fault");
}
