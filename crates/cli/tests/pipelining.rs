//! `pipeline:NxD` over HTTP/1.1: N connections, D requests written ahead
//! of their answers on each. Against the built-in server (plain, a long
//! tail, `--batching`), nginx, and servers that do not pipeline: one that
//! answers one request per connection and closes, one that answers one
//! and stops reading, one that answers out of order.
use crate::services::{
    cell_of as cell, finding_of as finding, nginx_urls, run_json, tune_json, Serve,
};
use crate::support::PortServer;
use std::time::Instant;

#[test]
fn pipelined_requests_are_each_answered_and_head_of_line_blocking_is_named() {
    // A long tail: median 2 ms, p99 40 ms; hyper answers pipelined
    // requests one at a time, so those behind a slow one wait for it.
    let serve = Serve::start(&["--delay", "lognormal(2ms,40ms)"]);
    let r = run_json(&[
        "run",
        &serve.url("/"),
        "-s",
        "pipeline:2x8",
        "-c",
        "16",
        "-d",
        "2s",
        "--warmup",
        "200ms",
    ]);
    let c = cell(&r, "pipeline:2x8");
    assert_eq!(c["errors"]["total"], 0, "{c}");
    assert!(c["requests"].as_u64().unwrap() > 100, "{c}");
    assert_eq!(c["connections"]["opened"], 2, "{c}");
    // The server counted what the client sent: no answer lost or doubled.
    let server = c["server"]["requests"].as_u64().unwrap();
    let sent = c["requests"].as_u64().unwrap();
    assert!(server >= sent, "server {server} < sent {sent}");
    let behind = c["behind_us"]["mean"].as_f64().expect("behind measured");
    let request = c["request_us"]["mean"].as_f64().unwrap();
    assert!(behind > 0.3 * request, "behind {behind} of {request} µs");
    let f = finding(&r, "head-of-line").unwrap_or_else(|| panic!("{}", r["findings"]));
    assert!(
        f["evidence"]
            .to_string()
            .contains("behind the answer before it"),
        "{f}"
    );
}

#[test]
fn a_batching_server_answers_pipelined_requests_whole() {
    let serve = Serve::start(&["--batching", "--delay", "1ms"]);
    let r = run_json(&[
        "run",
        &serve.url("/"),
        "-s",
        "pipeline:2x8,pool:16",
        "-c",
        "16",
        "-d",
        "1s",
        "--warmup",
        "200ms",
    ]);
    let c = cell(&r, "pipeline:2x8");
    assert_eq!(c["errors"]["total"], 0, "{c}");
    assert_eq!(c["connections"]["opened"], 2, "{c}");
    assert!(c["throughput_rps"].as_f64().unwrap() > 100.0, "{c}");
}

#[test]
fn nginx_pipelines_on_few_connections_without_errors() {
    let (url, _) = nginx_urls();
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "pipeline:4x16",
        "-c",
        "64",
        "-d",
        "1s",
        "--warmup",
        "200ms",
    ]);
    let c = cell(&r, "pipeline:4x16");
    assert_eq!(c["errors"]["total"], 0, "{c}");
    assert_eq!(c["connections"]["opened"], 4, "{c}");
    assert!(c["throughput_rps"].as_f64().unwrap() > 1000.0, "{c}");
    assert!(c["behind_us"]["count"].as_u64().unwrap() > 0, "{c}");
}

/// `run -s pipeline:2x4 -c 8 -d 2s` against `one_answer_server.py` (with
/// `args`) and `--timeout timeout`, done within its time and the timeout
/// (and 3 s to start and stop): the result and its cell.
fn run_refused(args: &[&str], timeout: &str) -> (serde_json::Value, serde_json::Value) {
    let server = PortServer::start("one_answer_server.py", args);
    let url = format!("http://127.0.0.1:{}/", server.port);
    let started = Instant::now();
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "pipeline:2x4",
        "-c",
        "8",
        "-d",
        "2s",
        "--warmup",
        "0s",
        "--timeout",
        timeout,
    ]);
    let wall = started.elapsed().as_secs_f64();
    // A hang guard: 3× the run and its timeout.
    let most = 3.0 * (2.0 + timeout.trim_end_matches("ms").parse::<f64>().unwrap() / 1000.0);
    assert!(wall < most, "{wall:.1} s");
    let c = cell(&r, "pipeline:2x4").clone();
    (r, c)
}

#[test]
fn a_server_that_closes_after_one_answer_is_counted_not_hung() {
    let (r, c) = run_refused(&[], "1000ms");
    // The first answer on each connection arrives; those written behind
    // it end with the connection: resets, and connections opened anew.
    assert!(c["ok"].as_u64().unwrap() > 0, "{c}");
    assert!(
        c["errors"]["by_kind"]["reset"].as_u64().unwrap_or(0) > 0,
        "{c}"
    );
    assert!(c["connections"]["opened"].as_u64().unwrap() > 2, "{c}");
    assert!(finding(&r, "errors").is_some(), "{}", r["findings"]);
    let refused = finding(&r, "pipeline-refused");
    let refused = refused.unwrap_or_else(|| panic!("{}", r["findings"]));
    assert!(refused.to_string().contains("answers one"), "{refused}");
}

/// `tune -s pipeline -c 8` against `script` (with `args`): nothing to
/// recommend, exit 1, within the probe's time rather than the budget, and
/// no point loaded with a pipeline; its reason.
fn tune_refused(script: &str, args: &[&str]) -> String {
    let server = PortServer::start(script, args);
    let url = format!("http://127.0.0.1:{}/", server.port);
    let started = Instant::now();
    let (r, _) = tune_json(
        &[&url, "-c", "8", "-s", "pipeline", "--budget", "20s"],
        &[1],
    );
    assert!(started.elapsed().as_secs_f64() < 20.0);
    let points = r["points"].as_array().unwrap();
    assert!(
        !points.iter().any(|p| p["strategy"]
            .as_str()
            .unwrap_or_default()
            .starts_with("pipeline")),
        "{points:?}"
    );
    // With every family skipped nothing at all is loaded.
    assert!(points.is_empty(), "{points:?}");
    let reason = r["reason"].as_str().unwrap_or_default().to_string();
    assert!(
        reason.contains("does not answer pipelined requests"),
        "{reason}"
    );
    reason
}

#[test]
fn tune_skips_the_pipeline_at_a_server_that_refuses_it_and_says_why() {
    let reason = tune_refused("one_answer_server.py", &[]);
    assert!(
        reason.contains("closed the connection after 1 answer"),
        "{reason}"
    );
}

#[test]
fn tune_names_a_server_that_stops_reading_after_one_answer() {
    let reason = tune_refused("one_answer_server.py", &["--stop-reading"]);
    assert!(
        reason.contains("stopped answering after 1 answer"),
        "{reason}"
    );
}

#[test]
fn a_server_that_stops_reading_after_one_answer_times_out_not_hangs() {
    let (r, c) = run_refused(&["--stop-reading"], "500ms");
    // One answer a connection; what was written behind it times out.
    assert!(c["ok"].as_u64().unwrap() > 0, "{c}");
    assert!(
        c["errors"]["by_kind"]["timeout"].as_u64().unwrap_or(0) > 0,
        "{c}"
    );
    let refused = finding(&r, "pipeline-refused");
    let refused = refused.unwrap_or_else(|| panic!("{}", r["findings"]));
    assert!(
        refused.to_string().contains("stopped reading or answering"),
        "{refused}"
    );
}

#[test]
fn tune_names_a_server_that_answers_pipelined_requests_out_of_order() {
    // One request at a time it answers well: the pool is measured.
    let server = PortServer::start("out_of_order_server.py", &[]);
    let url = format!("http://127.0.0.1:{}/", server.port);
    let r = run_json(&["run", &url, "-s", "pool:2", "-c", "2", "-d", "500ms"]);
    assert_eq!(cell(&r, "pool:2")["errors"]["total"], 0);
    let reason = tune_refused("out_of_order_server.py", &[]);
    assert!(reason.contains("out of order"), "{reason}");
}
