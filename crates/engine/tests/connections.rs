//! What each strategy does to connections, as the server counts them.
use crate::common::*;
use poolbench_server::ServerConfig;
use std::time::Duration;

#[test]
fn per_request_opens_one_connection_per_request_and_shared_exactly_one() {
    let (server, mut plan) = server(ServerConfig::default());
    plan.strategies = strategies("per-request,shared");
    plan.concurrency = vec![4];
    plan.requests = Some(300);
    plan.duration = Duration::from_secs(20);
    let result = run_with(&server, &plan);

    let per_request = cell(&result, "per-request", 4);
    let s = per_request.server.expect("server counters");
    assert_eq!(per_request.errors.total, 0);
    assert_eq!(per_request.requests, 300);
    // Every request the server saw came on its own connection.
    assert_eq!(s.connections_accepted, s.requests, "{s:?}");
    assert_eq!(per_request.connections.opened, s.connections_accepted);

    let shared = cell(&result, "shared", 4);
    let s = shared.server.expect("server counters");
    assert_eq!(shared.errors.total, 0);
    assert_eq!(s.connections_accepted, 1, "{s:?}");
    assert_eq!(s.connections_peak, 1);
    assert!(s.requests >= 300);
    assert_eq!(shared.connections.opened, 1);
}

#[test]
fn pool_never_has_more_than_n_open() {
    let (server, mut plan) = server(ServerConfig {
        delay: "2ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:3,round-robin:3");
    plan.concurrency = vec![20];
    let result = run_with(&server, &plan);
    for name in ["pool:3", "round-robin:3"] {
        let c = cell(&result, name, 20);
        let s = c.server.expect("server counters");
        assert!(c.ok > 100, "{name}: {} ok", c.ok);
        assert!(
            s.connections_peak <= 3,
            "{name}: server peak {}",
            s.connections_peak
        );
        assert_eq!(s.connections_accepted, 3, "{name}: accepted");
        assert!(c.connections.peak_open <= 3);
        // Workers outnumber connections, so most of them waited.
        assert!(c.pool.waited > 0, "{name}: no checkout waited");
    }
}

#[test]
fn take_or_create_opens_beyond_n_and_keeps_at_most_n_idle() {
    let (server, mut plan) = server(ServerConfig {
        delay: "5ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("take-or-create:2");
    plan.concurrency = vec![8];
    let result = run_with(&server, &plan);
    let c = cell(&result, "take-or-create:2", 8);
    let s = c.server.expect("server counters");
    assert_eq!(c.errors.total, 0);
    assert!(s.connections_peak > 2, "server peak {}", s.connections_peak);
    assert!(c.connections.opened > 2);
    assert!(
        c.connections.idle_at_end <= 2,
        "idle {}",
        c.connections.idle_at_end
    );
    assert!(
        c.pool.closed_overflow > 0,
        "no connection closed for exceeding the idle cap"
    );
}

#[test]
fn elastic_uses_overflow_only_under_pressure() {
    let (server, mut plan) = server(ServerConfig {
        delay: "5ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("elastic:2+3");
    plan.concurrency = vec![2, 10];
    let result = run_with(&server, &plan);
    let calm = cell(&result, "elastic:2+3", 2).server.unwrap();
    assert_eq!(calm.connections_accepted, 2);
    let busy = cell(&result, "elastic:2+3", 10).server.unwrap();
    assert_eq!(busy.connections_peak, 5, "core 2 plus 3 overflow");
}
