//! TLS handshakes per strategy and HTTP/2 stream limits, seen from the
//! built-in server's own counters.
use crate::common::*;
use poolbench_model::Plan;
use poolbench_server::{EmbeddedServer, ServerConfig};
use poolbench_targets::TargetOptions;
use std::time::Duration;

fn plan_for(url: String) -> Plan {
    let mut plan = Plan::new(poolbench_targets::parse_target(&url).unwrap());
    plan.pool_sizes = vec![];
    plan.warmup = Duration::from_millis(200);
    plan.duration = Duration::from_millis(1500);
    plan
}

fn tls_server(config: ServerConfig) -> EmbeddedServer {
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls_listen: Some("127.0.0.1:0".parse().unwrap()),
        ..config
    };
    EmbeddedServer::start(config, 1).expect("server starts")
}

/// The server's certificate in a file, as `--cacert` takes it.
struct CaFile(std::path::PathBuf);

impl CaFile {
    fn of(server: &EmbeddedServer, name: &str) -> CaFile {
        let path =
            std::env::temp_dir().join(format!("poolbench-{name}-{}.pem", std::process::id()));
        std::fs::write(&path, server.certificate_pem().expect("TLS certificate")).unwrap();
        CaFile(path)
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn per_request_over_tls_pays_one_handshake_per_request() {
    let server = tls_server(delay("1ms"));
    let ca = CaFile::of(&server, "per-request");
    let mut plan = plan_for(format!("https://{}/", server.addrs().tls.unwrap()));
    plan.target_options = TargetOptions {
        cacert: Some(ca.0.clone()),
        ..TargetOptions::default()
    };
    plan.strategies = strategies("per-request");
    plan.concurrency = vec![4];
    let result = run_with(&server, &plan);
    let c = cell(&result, "per-request", 4);
    assert_eq!(c.errors.total, 0, "{:?}", c.errors);
    let stats = server.stats().snapshot();
    assert!(stats.requests > 100, "{stats:?}");
    // Every request came on its own connection, each after a full handshake
    // (only the last few may have been cut before their request).
    assert!(
        stats.tls_handshakes >= stats.requests && stats.tls_handshakes <= stats.requests + 4,
        "{stats:?}"
    );
    assert!(c.connect_us.count > 100 && c.connect_us.mean > 0.0);
}

#[test]
fn a_pool_over_tls_handshakes_at_most_once_per_connection() {
    let server = tls_server(delay("1ms"));
    let mut plan = plan_for(format!("https://{}/", server.addrs().tls.unwrap()));
    plan.target_options = TargetOptions {
        insecure: true,
        ..TargetOptions::default()
    };
    plan.strategies = strategies("pool:3");
    plan.concurrency = vec![8];
    let result = run_with(&server, &plan);
    let c = cell(&result, "pool:3", 8);
    assert_eq!(c.errors.total, 0, "{:?}", c.errors);
    let stats = server.stats().snapshot();
    assert!(stats.requests > 100, "{stats:?}");
    assert!(stats.tls_handshakes <= 3, "{stats:?}");
}

#[test]
fn shared_h2c_never_opens_more_streams_than_the_server_allows() {
    let server = EmbeddedServer::start(
        ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            max_concurrent_streams: Some(10),
            ..delay("20ms")
        },
        1,
    )
    .expect("server starts");
    let mut plan = plan_for(format!("h2c://{}/", server.addr()));
    plan.strategies = strategies("shared");
    plan.concurrency = vec![50];
    let result = run_with(&server, &plan);
    let c = cell(&result, "shared", 50);
    assert_eq!(c.errors.total, 0, "{:?}", c.errors);
    assert_eq!(c.connections.opened, 1);
    let stats = server.stats().snapshot();
    assert_eq!(stats.h2_streams_peak, 10, "{stats:?}");
    // 50 workers share 10 streams of 20 ms: most of the latency is the wait
    // for a stream, reported as checkout wait.
    assert!(
        c.checkout_wait_us.p50 > 20_000.0,
        "wait {:?}",
        c.checkout_wait_us
    );
    // 10 streams × 50 answers per second each.
    assert!(
        within(c.throughput_rps, 500.0, 0.15),
        "{:.0}",
        c.throughput_rps
    );
}
