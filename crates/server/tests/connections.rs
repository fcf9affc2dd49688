//! Connection lifetime: max_requests_per_conn, keep-alive idle timeout, shutdown.

use std::time::{Duration, Instant};

use crate::common::{self, get1, get2, start, within};
use http::StatusCode;
use poolbench_server::ServerConfig;
use tokio::io::AsyncReadExt;

#[tokio::test]
async fn max_requests_per_conn_closes_http1_connections() {
    within(async {
        let server = start(ServerConfig {
            max_requests_per_conn: Some(3),
            ..ServerConfig::default()
        })
        .await;
        let mut client = None;
        let mut closes = 0;
        for i in 0..9 {
            let mut current = match client.take() {
                Some(c) => c,
                None => common::h1(server.addr).await,
            };
            let reply = get1(&mut current.0, "/").await;
            assert_eq!(reply.status, StatusCode::OK);
            let close = reply
                .headers
                .get("connection")
                .is_some_and(|v| v == "close");
            assert_eq!(close, i % 3 == 2, "request {i}");
            if close {
                closes += 1;
                // The server ends the connection after that response.
                current.1.await.unwrap().unwrap();
            } else {
                client = Some(current);
            }
        }
        assert_eq!(closes, 3);
        server.wait_for("0 open", |s| s.connections_open == 0).await;
        let stats = server.snapshot();
        assert_eq!(stats.connections_accepted, 3);
        assert_eq!(stats.requests, 9);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn max_requests_per_conn_shuts_h2_down_gracefully() {
    within(async {
        let server = start(ServerConfig {
            max_requests_per_conn: Some(3),
            ..ServerConfig::default()
        })
        .await;
        let (mut client, conn) = common::h2(server.addr).await;
        for _ in 0..3 {
            assert_eq!(
                get2(&mut client, server.addr, "/").await.status,
                StatusCode::OK
            );
        }
        // GOAWAY, then the connection ends.
        conn.await.unwrap().unwrap();
        server.wait_for("0 open", |s| s.connections_open == 0).await;
        assert_eq!(server.snapshot().connections_accepted, 1);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn idle_keepalive_connection_is_closed() {
    within(async {
        let server = start(ServerConfig {
            keepalive_timeout: Duration::from_millis(200),
            ..ServerConfig::default()
        })
        .await;
        let (mut client, conn) = common::h1(server.addr).await;
        // Activity keeps it open past the timeout.
        for _ in 0..4 {
            assert_eq!(get1(&mut client, "/").await.status, StatusCode::OK);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let idle_from = Instant::now();
        assert_eq!(get1(&mut client, "/").await.status, StatusCode::OK);
        assert_eq!(server.snapshot().connections_open, 1);
        conn.await.unwrap().unwrap();
        let idle = idle_from.elapsed();
        assert!(idle >= Duration::from_millis(190), "closed after {idle:?}");
        assert!(idle < Duration::from_millis(1500), "closed after {idle:?}");
        assert!(client.is_closed());
        server.wait_for("0 open", |s| s.connections_open == 0).await;
        assert_eq!(server.snapshot().connections_accepted, 1);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn silent_connection_is_closed_and_slow_request_is_not_cut() {
    within(async {
        let server = start(ServerConfig {
            keepalive_timeout: Duration::from_millis(200),
            delay: "500ms".parse().unwrap(),
            ..ServerConfig::default()
        })
        .await;
        // A connection that never sends a byte: EOF after the timeout.
        let mut silent = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(silent.read(&mut buf).await.unwrap(), 0);
        // A request longer than the idle timeout is in flight, so not idle.
        let (mut client, _conn) = common::h1(server.addr).await;
        assert_eq!(get1(&mut client, "/").await.status, StatusCode::OK);
        server.wait_for("0 open", |s| s.connections_open == 0).await;
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn shutdown_closes_open_connections() {
    within(async {
        let server = start(ServerConfig::default()).await;
        let (mut client, conn) = common::h1(server.addr).await;
        get1(&mut client, "/").await;
        let (mut client2, conn2) = common::h2(server.addr).await;
        get2(&mut client2, server.addr, "/").await;
        let addr = server.addr;
        let stats = server.stats.clone();
        server.stop().await;
        conn.await.unwrap().unwrap();
        conn2.await.unwrap().unwrap();
        assert_eq!(stats.snapshot().connections_open, 0);
        assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    })
    .await;
}
