//! `tls-handshake-bound` from hand-built TLS cells.
use crate::support::{cell, evidence, run, summary};
use poolbench_model::{CellResult, TlsFacts};

/// per-request over TLS: each request `connect_ms` connecting of
/// `latency_ms` in all.
fn per_request(rps: f64, latency_ms: f64, connect_ms: f64, resumed: u64) -> CellResult {
    let mut c = cell("per-request", 8)
        .throughput(rps)
        .latency_ms(latency_ms)
        .build();
    c.connect_us = summary(c.latency_us.count, connect_ms * 1000.0, connect_ms * 3000.0);
    c.connections.requests_per_connection = 1.0;
    c.tls = Some(TlsFacts {
        resumption: resumed > 0,
        full: c.latency_us.count.saturating_sub(resumed),
        resumed,
        ..TlsFacts::default()
    });
    c
}

#[test]
fn handshakes_taking_most_of_the_latency_are_reported_with_what_a_pool_served() {
    let pool = cell("pool:8", 8).throughput(20000.0).build();
    let pr = per_request(2000.0, 4.0, 2.6, 0);
    let lines = evidence(&run(vec![pr, pool]), "tls-handshake-bound");
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert!(
        l.starts_with("per-request c=8: connecting took 65% of request latency"),
        "{l}"
    );
    assert!(l.contains("2000 full, 0 resumed"), "{l}");
    assert!(
        l.contains("pool:8 kept its connections and served 20000 req/s against 2000 (10.0x)"),
        "{l}"
    );
    assert!(l.contains("--tls-resume off"), "{l}");
}

#[test]
fn cheap_handshakes_or_plain_connections_are_not_reported() {
    let cheap = per_request(2000.0, 4.0, 0.4, 1900);
    assert!(evidence(&run(vec![cheap]), "tls-handshake-bound").is_empty());
    let mut plain = per_request(2000.0, 4.0, 2.6, 0);
    plain.tls = None;
    assert!(evidence(&run(vec![plain]), "tls-handshake-bound").is_empty());
}
