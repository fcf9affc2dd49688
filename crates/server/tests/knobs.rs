//! Behaviour knobs: fail_rate, max_inflight with delay, cpu.

use std::time::{Duration, Instant};

use crate::common::{self, get1, start, within};
use http::StatusCode;
use poolbench_server::ServerConfig;

#[tokio::test]
async fn fail_rate_answers_that_fraction_with_500() {
    within(async {
        let server = start(ServerConfig {
            fail_rate: 0.1,
            ..ServerConfig::default()
        })
        .await;
        let (mut client, _conn) = common::h1(server.addr).await;
        let mut failed = 0u64;
        for _ in 0..2000 {
            let reply = get1(&mut client, "/").await;
            match reply.status {
                StatusCode::OK => assert_eq!(&reply.body[..], b"Hello, World!"),
                StatusCode::INTERNAL_SERVER_ERROR => failed += 1,
                other => panic!("unexpected status {other}"),
            }
        }
        assert!(
            (140..=260).contains(&failed),
            "{failed} of 2000 failed, want 10% ± 3%"
        );
        let stats = server.snapshot();
        assert_eq!(stats.responses_failed, failed);
        assert_eq!(stats.requests, 2000);
        assert_eq!(stats.connections_accepted, 1, "a 500 keeps the connection");
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn fail_rate_extremes() {
    within(async {
        for (rate, want) in [
            (0.0, StatusCode::OK),
            (1.0, StatusCode::INTERNAL_SERVER_ERROR),
        ] {
            let server = start(ServerConfig {
                fail_rate: rate,
                ..ServerConfig::default()
            })
            .await;
            let (mut client, _conn) = common::h1(server.addr).await;
            for _ in 0..50 {
                assert_eq!(get1(&mut client, "/").await.status, want);
            }
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_inflight_makes_excess_requests_wait() {
    within(async {
        let server = start(ServerConfig {
            max_inflight: Some(2),
            delay: "100ms".parse().unwrap(),
            ..ServerConfig::default()
        })
        .await;
        let mut clients = Vec::new();
        for _ in 0..10 {
            clients.push(common::h1(server.addr).await);
        }
        let started = Instant::now();
        let tasks: Vec<_> = clients
            .into_iter()
            .map(|(mut client, conn)| {
                tokio::spawn(async move {
                    let status = get1(&mut client, "/").await.status;
                    drop(conn);
                    status
                })
            })
            .collect();
        for task in tasks {
            assert_eq!(
                task.await.unwrap(),
                StatusCode::OK,
                "excess requests wait, not fail"
            );
        }
        let took = started.elapsed();
        let stats = server.snapshot();
        assert_eq!(stats.inflight_peak, 2, "{stats:?}");
        assert_eq!(stats.inflight, 0);
        assert_eq!(stats.requests, 10);
        // Five waves of 100 ms.
        assert!(took >= Duration::from_millis(490), "took {took:?}");
        assert!(took < Duration::from_millis(1500), "took {took:?}");
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn delay_and_cpu_add_time() {
    within(async {
        for (config, least) in [
            (
                ServerConfig {
                    delay: "uniform(30ms,40ms)".parse().unwrap(),
                    ..ServerConfig::default()
                },
                30,
            ),
            (
                ServerConfig {
                    cpu: Duration::from_millis(25),
                    ..ServerConfig::default()
                },
                25,
            ),
        ] {
            let server = start(config).await;
            let (mut client, _conn) = common::h1(server.addr).await;
            for _ in 0..3 {
                let started = Instant::now();
                assert_eq!(get1(&mut client, "/").await.status, StatusCode::OK);
                let took = started.elapsed();
                assert!(took >= Duration::from_millis(least), "took {took:?}");
                assert!(took < Duration::from_secs(2), "took {took:?}");
            }
            server.stop().await;
        }
    })
    .await;
}
