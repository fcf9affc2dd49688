//! The stored real result, and the builder's quiet cell.
use crate::support::{base, cell, ids, quiet, run};
use poolbench_analysis::{analyze, find_all, CHECKS};

#[test]
fn the_stored_run_is_read_again_as_it_was_analyzed() {
    let stored = base();
    let mut again = stored.clone();
    analyze(&mut again);
    assert_eq!(again.findings, stored.findings);
    assert_eq!(again.recommendation, stored.recommendation);
    assert_eq!(again.reason, stored.reason);
    // A one-cell, one-run grid at c=4 against a 2 ms server.
    let found: Vec<&str> = stored.findings.iter().map(|p| p.id.as_str()).collect();
    assert!(found.contains(&"closed-loop-ceiling"), "{found:?}");
    assert!(found.contains(&"few-samples"), "{found:?}");
}

#[test]
fn a_quiet_cell_trips_no_finding() {
    let r = run(vec![quiet("pool:4", 4, 1000.0), quiet("pool:8", 8, 1500.0)]);
    assert_eq!(ids(&r), Vec::<String>::new(), "{:#?}", find_all(&r));
    // Nor with every default spelled out through the builder.
    let r = run(vec![cell("shared", 1).throughput(800.0).build()]);
    assert_eq!(ids(&r), Vec::<String>::new(), "{:#?}", find_all(&r));
}

/// Adding a check to CHECKS without a fixture test here fails this test.
#[test]
fn every_check_has_a_fixture_test() {
    let tested = [
        "batching-server",
        // The client-* checks read a `serve --check-client` watch, not a
        // run: their fixtures are in src/client_check.rs's tests.
        "client-churn",
        "client-hidden-cap",
        "client-idle-race",
        "client-single-connection",
        "closed-loop-ceiling",
        "delayed-ack",
        "errors",
        "few-samples",
        "fleet-overcommit",
        "generator-hiccups",
        "generator-saturated",
        "head-of-line",
        "idle-hoard",
        "idle-reuse-race",
        "machine-busy",
        "near-connection-limit",
        "nested-checkout",
        "nested-checkout-starvation",
        "not-achieved",
        "outage",
        "pipeline-refused",
        "pool-beyond-client",
        "pool-bound",
        "pool-queueing",
        "reconnects",
        "stall",
        "streams-capped",
        "target-saturated",
        "tls-handshake-bound",
        "transaction-pooler",
        "unequal-caps",
    ];
    let mut ids: Vec<&str> = CHECKS.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, tested);
    assert!(CHECKS.iter().all(|c| !c.title.is_empty()));
}
