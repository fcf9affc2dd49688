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

/// The built-in server on port 0 with its TLS and gRPC listeners; its
/// HTTP listener speaks only HTTP/1.1 when `http1_only`.
fn listeners(http1_only: bool) -> poolbench_server::EmbeddedServer {
    let any = "127.0.0.1:0".parse().unwrap();
    let config = poolbench_server::ServerConfig {
        listen: any,
        tls_listen: Some(any),
        grpc_listen: Some(any),
        http1_only,
        ..poolbench_server::ServerConfig::default()
    };
    poolbench_server::EmbeddedServer::start(config, 1).unwrap()
}

#[test]
fn grpc_target_without_a_greeter() {
    let server = listeners(false);
    // The plain HTTP listener answers gRPC calls UNIMPLEMENTED.
    let url = format!("grpc://{}/", server.addr());
    assert_rejected(
        &["run", &url, "-d", "1s"],
        "does not implement helloworld.Greeter/SayHello",
    );
}

#[test]
fn https_with_an_untrusted_certificate() {
    let server = listeners(false);
    let url = format!("https://{}/", server.addrs().tls.unwrap());
    assert_rejected(
        &["run", &url, "-d", "1s"],
        "a CA this machine does not trust",
    );
    let url = format!("grpcs://{}/", server.addrs().tls.unwrap());
    assert_rejected(
        &["run", &url, "-d", "1s"],
        "a CA this machine does not trust",
    );
}

#[test]
fn h2c_against_an_http1_only_server() {
    let server = listeners(true);
    let url = format!("h2c://{}/", server.addr());
    assert_rejected(&["run", &url, "-d", "1s"], "not an HTTP/2 server");
}

#[test]
fn unreadable_cacert() {
    let server = listeners(false);
    let url = format!("https://{}/", server.addrs().tls.unwrap());
    assert_rejected(
        &["run", &url, "--cacert", "/nonexistent/ca.pem", "-d", "1s"],
        "--cacert /nonexistent/ca.pem",
    );
}

#[test]
fn a_concurrency_the_memory_cannot_hold() {
    assert_rejected(&["run", "-c", "1000000000000"], "memory");
    assert_rejected(&["run", "-c", "10000000", "-s", "shared"], "lower -c");
}

#[test]
fn more_connections_than_descriptors() {
    // Under a hard limit of 256 descriptors, 1,000 connections (2,000 with
    // the built-in server in this process) cannot be opened.
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" run -s pool:1000 -c 1000 -d 1s"#)
        .arg(env!("CARGO_BIN_EXE_poolbench"))
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("needs 2064 file descriptors") && stderr.contains("may open 256"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn bad_http_requests() {
    // On the built-in server: refused before any load, whatever the target.
    assert_rejected(&["run", "-H", "NoColon"], "expected \"Name: value\"");
    assert_rejected(&["run", "-H", "Content-Length: 3"], "set by poolbench");
    assert_rejected(&["run", "-m", "GE T"], "--method");
    assert_rejected(
        &["run", "--body-file", "/nonexistent/body.json"],
        "cannot read --body-file /nonexistent/body.json",
    );
    assert_rejected(&["run", "--body", "{random:9..1}"], "{random:9..1}");
    assert_rejected(
        &["run", "redis://127.0.0.1:1/", "-m", "POST"],
        "apply to http://, h2c:// and https:// targets",
    );
}

#[test]
fn an_output_that_cannot_be_written_is_found_before_any_load() {
    assert_rejected(
        &["run", "-o", "/nonexistent-dir/x.json", "-d", "1s"],
        "cannot write -o /nonexistent-dir/x.json",
    );
    let dir = std::env::temp_dir();
    let d = dir.to_str().unwrap();
    assert_rejected(&["run", "-o", d, "-d", "1s"], "it is a directory");
}
