//! `pool-beyond-client`: client pools of 5, 20 and 80 at c=80 through a
//! proxy whose pool is 20 (PgBouncer's default_pool_size), each request 5 ms
//! at the server. The client's wait moves into the proxy: the larger pool
//! serves no more and its requests take longer.
use crate::support::{cell, evidence, run};
use poolbench_analysis::analyze;
use poolbench_model::CellResult;

/// `strategy` at c=80: `rps` req/s, `request_ms` once it has a client
/// connection, `latency_ms` in all (the rest waiting for one).
fn at80(strategy: &str, rps: f64, request_ms: f64, latency_ms: f64) -> CellResult {
    cell(strategy, 80)
        .throughput(rps)
        .latency_ms(latency_ms)
        .wait_ms(latency_ms - request_ms)
        .build()
}

fn behind_a_pool_of_20(pool80_rps: f64, pool80_wait_ms: f64) -> Vec<CellResult> {
    vec![
        at80("pool:5", 1000.0, 5.0, 80.0),
        at80("pool:20", 3900.0, 5.1, 20.5),
        at80("pool:80", pool80_rps, 20.2, 20.2 + pool80_wait_ms),
    ]
}

#[test]
fn a_larger_client_pool_that_serves_no_more_points_beyond_the_client() {
    let r = run(behind_a_pool_of_20(3950.0, 0.1));
    assert_eq!(
        evidence(&r, "pool-beyond-client"),
        [
            "pool:80 c=80: 3950 req/s, no more than pool:20's 3900, with 0% of latency waiting \
          for a client connection; each request took 20.2 ms against 5.1 ms: requests queue \
          beyond the client, which is served about 20 at a time — the limit is a pool in \
          between (a proxy's pool, e.g. PgBouncer's default_pool_size) or the server's, not \
          the client's pool"
        ]
    );
    // The client's pool of 5 did limit its cell; the pool of 20 did not,
    // since 80 served no more.
    let bound = evidence(&r, "pool-bound");
    assert_eq!(bound.len(), 1, "{bound:?}");
    assert!(bound[0].starts_with("pool:5 c=80"), "{bound:?}");
    let mut r = r;
    analyze(&mut r);
    let rec = r.recommendation.expect("a recommendation");
    assert_eq!(rec.strategy, "pool:20");
}

#[test]
fn not_when_the_larger_pool_served_more_or_its_workers_waited() {
    // Served a quarter more: the client's pool was part of the limit.
    let more = run(behind_a_pool_of_20(4900.0, 0.1));
    assert!(evidence(&more, "pool-beyond-client").is_empty());
    // 15% more is no more from 20 to 80 connections, but is from 20 to 24.
    let r = run(behind_a_pool_of_20(4485.0, 0.1));
    assert_eq!(evidence(&r, "pool-beyond-client").len(), 1);
    let near = run(vec![
        at80("pool:20", 3900.0, 5.1, 20.5),
        at80("pool:24", 4485.0, 20.2, 20.3),
    ]);
    assert!(evidence(&near, "pool-beyond-client").is_empty());
    // Waited for client connections: the client's pool still queues.
    let waited = run(behind_a_pool_of_20(3950.0, 10.0));
    assert!(evidence(&waited, "pool-beyond-client").is_empty());
    // One pool size alone says nothing of a larger one.
    let alone = run(vec![at80("pool:80", 3950.0, 20.2, 20.3)]);
    assert!(evidence(&alone, "pool-beyond-client").is_empty());
}
