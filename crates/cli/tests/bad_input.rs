//! Bad input: one line naming the problem, exit code 2, within 2 seconds.
use std::process::Command;
use std::time::{Duration, Instant};

fn poolbench(args: &[&str]) -> (i32, String, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .expect("poolbench runs");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (out.status.code().unwrap_or(-1), stderr, took)
}

fn assert_rejected(args: &[&str], mentions: &str) {
    let (code, stderr, took) = poolbench(args);
    assert_eq!(code, 2, "{args:?}: exit {code}, stderr {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(
        stderr.contains(mentions),
        "{args:?}: {stderr} does not mention {mentions}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(took < Duration::from_secs(2), "{args:?} took {took:?}");
}

#[test]
fn unparsable_url() {
    assert_rejected(&["run", "http://exa mple/"], "invalid target URL");
    assert_rejected(&["run", "ftp://127.0.0.1/"], "unsupported scheme");
}

#[test]
fn zero_concurrency_and_zero_pool_size() {
    assert_rejected(&["run", "-c", "10,0"], "concurrency must be at least 1");
    assert_rejected(&["run", "--pool", "0"], "pool size must be at least 1");
    assert_rejected(&["run", "-s", "pool:0"], "size must be at least 1");
}

#[test]
fn unknown_strategy() {
    assert_rejected(&["run", "-s", "pool:4,lifo:3"], "unknown strategy");
}

#[test]
fn bad_duration() {
    assert_rejected(&["run", "-d", "10x"], "\"10x\" is not a duration");
    assert_rejected(&["serve", "--delay", "10x"], "invalid delay");
}

#[test]
fn refused_target() {
    // Bind a port, then free it: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    assert_rejected(&["run", &url, "-d", "1s"], "cannot reach");
}

#[test]
fn bad_load_models() {
    assert_rejected(&["run", "--rate", "0"], "rate must be greater than zero");
    assert_rejected(
        &["run", "--rate", "100", "--batch", "10"],
        "cannot be used with",
    );
    assert_rejected(&["run", "--reps", "0"], "reps must be at least 1");
    assert_rejected(
        &["run", "-n", "100", "--batch", "50", "--samples", "5"],
        "--samples 5 needs 250 requests",
    );
    assert_rejected(&["run", "--pipeline", "1"], "at least 2");
}
