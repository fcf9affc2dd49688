//! Closed-loop throughput obeys Little's law against a server with a fixed
//! delay, and pool waits show up as checkout wait.
use crate::common::*;
use poolbench_server::ServerConfig;
use std::time::Duration;

#[test]
fn throughput_follows_littles_law_and_waits_are_checkout_time() {
    let (server, mut plan) = server(ServerConfig {
        delay: "100ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:10,pool:2");
    plan.concurrency = vec![10];
    plan.warmup = Duration::from_millis(500);
    plan.duration = Duration::from_secs(3);
    let result = run_with(&server, &plan);

    let full = cell(&result, "pool:10", 10);
    assert!(
        within(full.throughput_rps, 100.0, 0.10),
        "pool:10 at c=10: {} req/s",
        full.throughput_rps
    );
    assert_eq!(full.errors.total, 0);

    let narrow = cell(&result, "pool:2", 10);
    assert!(
        within(narrow.throughput_rps, 20.0, 0.10),
        "pool:2 at c=10: {} req/s",
        narrow.throughput_rps
    );
    assert_eq!(narrow.errors.total, 0);
    // Each request waits for four others on its connection: ~400 of ~500 ms.
    let wait_share = narrow.checkout_wait_us.mean / narrow.latency_us.mean;
    assert!(
        wait_share > 0.6,
        "checkout wait is {:.0}% of latency",
        wait_share * 100.0
    );
    assert!(full.checkout_wait_us.mean / full.latency_us.mean < 0.1);
}

/// More workers than connections: the workers wait in one FIFO line for
/// the pool's connections, and a wait past the checkout timeout is a
/// `checkout_timeout` error where it gave up, as a pool waiter's.
#[test]
fn workers_beyond_the_pool_wait_in_line_and_give_up_at_the_checkout_timeout() {
    let (server, mut plan) = server(ServerConfig {
        delay: "100ms".parse().unwrap(),
        ..ServerConfig::default()
    });
    plan.strategies = strategies("pool:1");
    // Each of 4 workers waits for 3 others' 100 ms: 300 ms, past 250 ms.
    plan.concurrency = vec![4];
    plan.pool.checkout_timeout = Duration::from_millis(250);
    plan.warmup = Duration::from_millis(500);
    plan.duration = Duration::from_secs(3);
    let result = run_in_turn(&server, &plan);
    let c = cell(&result, "pool:1", 4);
    // The one connection stays busy: about 10 answers a second.
    assert!(
        within(c.throughput_rps, 10.0, 0.2),
        "{} req/s",
        c.throughput_rps
    );
    let gave_up = c
        .errors
        .by_kind
        .get("checkout_timeout")
        .copied()
        .unwrap_or(0);
    assert!(gave_up >= 5, "{:?}", c.errors);
    assert_eq!(gave_up, c.errors.total, "{:?}", c.errors);
    assert!(c.pool.timeouts >= gave_up, "{:?}", c.pool);
    // Served in the order they began to wait: no success waited past
    // the timeout.
    assert!(
        c.checkout_wait_us.max <= 250_000.0 + 20_000.0,
        "{:?}",
        c.checkout_wait_us
    );
    assert!(c.pool.waited > 0 && c.pool.opened == 1, "{:?}", c.pool);
}
