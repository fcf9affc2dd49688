//! `serve --metrics-listen`: the built-in server's own counters as a
//! Prometheus exposition (requests, in flight, connections; the database
//! pool's in service mode). They restart from zero when a client resets
//! them (`POST /_poolbench/stats/reset`, as `run` does before each cell), which
//! Prometheus's `rate()` takes as a counter reset.
use crate::check_client::Checker;
use poolbench_model::findings::Id;
use poolbench_model::ClientCheck;
use poolbench_model::DbPoolCounters;
use poolbench_report::Exposition;
use poolbench_server::{Authors, CounterValues, Counters};
use std::sync::Arc;

/// (name, type, help, the value) of one series.
type Series<T> = (&'static str, &'static str, &'static str, fn(&T) -> f64);

const SERVER: [Series<CounterValues>; 9] = [
    (
        "poolbench_server_requests_total",
        "counter",
        "Requests received (not /_poolbench/*), since start or the last reset.",
        |s| s.requests as f64,
    ),
    (
        "poolbench_server_requests_in_flight",
        "gauge",
        "Requests being processed now.",
        |s| s.inflight as f64,
    ),
    (
        "poolbench_server_responses_failed_total",
        "counter",
        "Requests answered 500 (--fail-rate).",
        |s| s.responses_failed as f64,
    ),
    (
        "poolbench_server_service_seconds_total",
        "counter",
        "Time requests spent inside the server (limit wait, delay, cpu, stall).",
        |s| s.service_ns_total as f64 / 1e9,
    ),
    (
        "poolbench_server_connections_open",
        "gauge",
        "Client connections open now.",
        |s| s.connections_open as f64,
    ),
    (
        "poolbench_server_connections_accepted_total",
        "counter",
        "Client connections accepted.",
        |s| s.connections_accepted as f64,
    ),
    (
        "poolbench_server_tls_handshakes_total",
        "counter",
        "TLS handshakes completed.",
        |s| s.tls_handshakes as f64,
    ),
    (
        "poolbench_server_tls_resumed_total",
        "counter",
        "TLS handshakes that resumed an earlier session.",
        |s| s.tls_resumed as f64,
    ),
    (
        "poolbench_server_grpc_requests_total",
        "counter",
        "gRPC SayHello calls received.",
        |s| s.grpc_requests as f64,
    ),
];

const DB_POOL: [Series<DbPoolCounters>; 9] = [
    (
        "poolbench_server_db_pool_size",
        "gauge",
        "Connections the database pool keeps (--db-pool).",
        |d| d.size as f64,
    ),
    (
        "poolbench_server_db_pool_overflow",
        "gauge",
        "Overflow connections allowed above the size.",
        |d| d.overflow as f64,
    ),
    (
        "poolbench_server_db_connections_open",
        "gauge",
        "Database connections open now.",
        |d| d.open as f64,
    ),
    (
        "poolbench_server_db_checkouts_total",
        "counter",
        "Database connections leased.",
        |d| d.checkouts as f64,
    ),
    (
        "poolbench_server_db_checkout_waits_total",
        "counter",
        "Database checkouts that waited for a connection.",
        |d| d.waits as f64,
    ),
    (
        "poolbench_server_db_checkout_timeouts_total",
        "counter",
        "Database checkouts that gave up at --db-timeout.",
        |d| d.timeouts as f64,
    ),
    (
        "poolbench_server_db_nested_waits_total",
        "counter",
        "Checkouts that waited while their request held a connection.",
        |d| d.nested_waits as f64,
    ),
    (
        "poolbench_server_cache_hits_total",
        "counter",
        "Requests answered from the Redis cache.",
        |d| d.cache_hits as f64,
    ),
    (
        "poolbench_server_cache_misses_total",
        "counter",
        "Requests the cache could not answer.",
        |d| d.cache_misses as f64,
    ),
];

fn write<T>(x: &mut Exposition, table: &[Series<T>], of: &T) {
    for (name, kind, help, value) in table {
        x.family(name, kind, help);
        x.sample(name, &[], value(of));
    }
}

/// `serve --check-client`: what the client did so far, and each finding
/// as 1 (shown) or 0.
fn write_check(x: &mut Exposition, c: &ClientCheck) {
    let w = &c.watch;
    let series: [(&str, &str, &str, f64); 5] = [
        (
            "poolbench_client_connections_peak",
            "gauge",
            "Most client connections open at once (--check-client).",
            w.connections_peak as f64,
        ),
        (
            "poolbench_client_in_flight_peak",
            "gauge",
            "Most client requests in flight at once (--check-client).",
            w.in_flight_peak as f64,
        ),
        (
            "poolbench_client_requests_per_connection",
            "gauge",
            "Requests per connection opened (--check-client).",
            c.requests_per_connection,
        ),
        (
            "poolbench_client_idle_gap_max_seconds",
            "gauge",
            "Longest idle gap between a connection's requests (--check-client).",
            w.idle_gap_max_s,
        ),
        (
            "poolbench_client_streams_peak",
            "gauge",
            "Most HTTP/2 streams open at once on one connection (--check-client).",
            w.streams_peak as f64,
        ),
    ];
    for (name, kind, help, v) in series {
        x.family(name, kind, help);
        x.sample(name, &[], v);
    }
    let name = "poolbench_client_finding";
    x.family(
        name,
        "gauge",
        "A client finding: 1 shown by what was seen so far, else 0 (--check-client).",
    );
    for id in [
        Id::ClientChurn,
        Id::ClientHiddenCap,
        Id::ClientIdleRace,
        Id::ClientSingleConnection,
    ] {
        let shown = c.findings.iter().any(|f| f.id == id);
        x.sample(name, &[("id", id.to_string())], f64::from(u8::from(shown)));
    }
}

/// The exposition of the server's counters now.
pub(crate) fn render(
    stats: &Counters,
    authors: Option<&Authors>,
    check: Option<&Checker>,
) -> String {
    let mut x = Exposition::new();
    x.family(
        "poolbench_info",
        "gauge",
        "poolbench itself: 1, its version and command as labels.",
    );
    x.sample("poolbench_info", &crate::metrics_listen::info("serve"), 1.0);
    write(&mut x, &SERVER, &stats.snapshot());
    if let Some(a) = authors {
        write(&mut x, &DB_POOL, &a.stats());
    }
    if let Some(c) = check {
        write_check(&mut x, &c.check("running"));
    }
    x.finish()
}

/// The endpoint's view of a server: what it renders when scraped.
pub(crate) fn renderer(
    stats: Arc<Counters>,
    authors: Option<Arc<Authors>>,
    check: Option<Arc<Checker>>,
) -> crate::metrics_listen::Render {
    Arc::new(move || render(&stats, authors.as_deref(), check.as_deref()))
}
