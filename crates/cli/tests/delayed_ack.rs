//! Time to first byte and to last byte, end to end: a Python server that
//! writes its answer in two writes with Nagle on (support/nagle_server.py)
//! makes every request wait for the client's delayed ACK, and poolbench
//! sees the first byte at once, the last about 40 ms later, and says why.
use crate::support::{run, PortServer};
use crate::turns::ONE_AT_A_TIME;

#[test]
fn two_writes_with_nagle_wait_for_the_delayed_ack() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let server = PortServer::start("nagle_server.py", &[]);
    let url = format!("http://127.0.0.1:{}/", server.port);
    let result = run(&[
        &url, "-s", "pool:2", "-c", "2", "-d", "2s", "--warmup", "300ms",
    ]);
    let cell = &result["cells"][0];
    let first = cell["first_byte_us"]["p50"]
        .as_f64()
        .expect("a time to first byte");
    let gap = cell["last_byte_us"]["p50"]
        .as_f64()
        .expect("a time to last byte");
    let request = cell["request_us"]["p50"].as_f64().unwrap();
    assert!(first < 5_000.0, "first byte p50 {first} µs");
    assert!(gap >= 30_000.0, "first to last byte p50 {gap} µs");
    // The two parts make the request.
    assert!(
        (first + gap - request).abs() < 0.1 * request,
        "{first} + {gap} against {request}"
    );
    // The histograms are kept for merges.
    let h = &cell["histograms"];
    assert!(!h["first_byte_ns"].as_str().unwrap().is_empty());
    assert!(!h["last_byte_ns"].as_str().unwrap().is_empty());
    // 2 workers at ~44 ms a request: ~46 req/s, as wrk sees it.
    let rps = cell["throughput_rps"].as_f64().unwrap();
    assert!(rps < 70.0, "{rps} req/s: no delayed ACK held the answers");
    let found = result["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "delayed-ack")
        .unwrap_or_else(|| panic!("no delayed-ack in {}", result["findings"]));
    let line = found["evidence"][0].as_str().unwrap();
    assert!(line.starts_with("pool:2 c=2: first byte after"), "{line}");
    assert!(line.contains("two writes with Nagle on"), "{line}");
}
