//! Failures are counted by kind and never stop the run.
use crate::common::*;
use poolbench_server::ServerConfig;
use std::time::Duration;

#[test]
fn fail_rate_is_counted_as_status_errors_and_the_run_completes() {
    let (server, mut plan) = server(ServerConfig {
        fail_rate: 0.1,
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:4");
    plan.concurrency = vec![4];
    plan.requests = Some(3000);
    plan.duration = Duration::from_secs(30);
    let result = run_with(&server, &plan);
    let c = cell(&result, "pool:4", 4);
    assert_eq!(c.requests, 3000);
    let rate = c.error_rate();
    assert!((0.07..=0.13).contains(&rate), "error rate {rate}");
    assert_eq!(c.errors.by_kind.get("status"), Some(&c.errors.total));
    assert_eq!(
        c.errors.by_status.get("500"),
        Some(&c.errors.total),
        "counted by status code"
    );
    assert_eq!(c.ok + c.errors.total, c.requests);
    // A 500 does not break the connection.
    assert_eq!(c.server.unwrap().connections_accepted, 4);
}

#[test]
fn server_closing_connections_is_not_an_error() {
    let (server, mut plan) = server(ServerConfig {
        max_requests_per_conn: Some(5),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:2");
    plan.concurrency = vec![2];
    plan.requests = Some(500);
    plan.duration = Duration::from_secs(30);
    let result = run_with(&server, &plan);
    let c = cell(&result, "pool:2", 2);
    assert_eq!(c.errors.total, 0, "{:?}", c.errors);
    assert!(
        c.connections.opened >= 100,
        "opened {}",
        c.connections.opened
    );
}

#[test]
fn request_timeouts_are_counted_and_bounded() {
    let (server, mut plan) = server(ServerConfig {
        delay: "300ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:2");
    plan.concurrency = vec![2];
    plan.timeout = Duration::from_millis(50);
    let started = std::time::Instant::now();
    let result = run_with(&server, &plan);
    assert!(started.elapsed() < Duration::from_secs(4));
    let c = cell(&result, "pool:2", 2);
    assert_eq!(c.ok, 0);
    assert!(
        c.errors.by_kind.get("timeout").copied().unwrap_or(0) > 10,
        "{:?}",
        c.errors
    );
}
