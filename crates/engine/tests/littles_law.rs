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
