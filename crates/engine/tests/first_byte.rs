//! The request split at the answer's first byte, over HTTP/1.1 and h2c:
//! the server's delay comes before its first byte, the body right after.
use crate::common::*;
use poolbench_model::decode_histogram;

#[test]
fn http1_requests_split_at_the_first_byte() {
    let (server, mut plan) = server(delay("5ms"));
    plan.strategies = strategies("pool:2");
    plan.concurrency = vec![2];
    plan.requests = Some(200);
    let result = run_with(&server, &plan);
    let c = cell(&result, "pool:2", 2);
    let first = c.first_byte_us.expect("HTTP/1.1 tells the first byte");
    let last = c.last_byte_us.expect("and the last");
    assert_eq!((first.count, last.count), (c.ok, c.ok));
    // The 5 ms is the service's, before its first byte; the small body
    // comes in the same write.
    assert!(first.p50 >= 4_500.0, "first byte p50 {} µs", first.p50);
    assert!(last.p50 < 1_000.0, "first to last byte p50 {} µs", last.p50);
    assert!(
        within(first.mean + last.mean, c.request_us.mean, 0.02),
        "{} + {} against {}",
        first.mean,
        last.mean,
        c.request_us.mean
    );
    assert!(
        c.body_bytes > 0 && c.body_bytes.is_multiple_of(c.ok),
        "{} bytes",
        c.body_bytes
    );
    for h in [&c.histograms.first_byte_ns, &c.histograms.last_byte_ns] {
        assert_eq!(decode_histogram(h).expect("decodes").len(), c.ok);
    }
}

#[test]
fn h2c_requests_split_at_the_first_frame() {
    let (server, _) = server(delay("3ms"));
    let mut plan = poolbench_model::Plan::new(
        poolbench_targets::parse_target(&format!("h2c://{}/", server.addr())).unwrap(),
    );
    plan.pool_sizes = vec![];
    plan.warmup = std::time::Duration::ZERO;
    plan.strategies = strategies("shared");
    plan.concurrency = vec![2];
    plan.requests = Some(100);
    let result = run_with(&server, &plan);
    let c = cell(&result, "shared", 2);
    let first = c.first_byte_us.expect("the lean HTTP/2 client tells");
    let last = c.last_byte_us.expect("and the last");
    assert_eq!((first.count, last.count), (c.ok, c.ok));
    assert!(first.p50 >= 2_500.0, "first byte p50 {} µs", first.p50);
    assert!(last.p50 < 1_000.0, "first to last byte p50 {} µs", last.p50);
}
