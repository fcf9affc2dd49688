//! HTTP/1.1 and h2c (prior knowledge) on the same port; the response itself.

use crate::common::{self, get1, get2, start, within};
use http::{StatusCode, Version};
use poolbench_server::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn http1_and_h2c_share_the_port() {
    within(async {
        let server = start(ServerConfig::default()).await;

        let (mut c1, _conn1) = common::h1(server.addr).await;
        let reply = get1(&mut c1, "/").await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.version, Version::HTTP_11);
        assert_eq!(&reply.body[..], b"Hello, World!");
        assert_eq!(reply.headers["content-type"], "text/plain");
        assert_eq!(reply.headers["content-length"], "13");

        let (mut c2, _conn2) = common::h2(server.addr).await;
        for _ in 0..3 {
            let reply = get2(&mut c2, server.addr, "/x").await;
            assert_eq!(reply.status, StatusCode::OK);
            assert_eq!(reply.version, Version::HTTP_2);
            assert_eq!(&reply.body[..], b"Hello, World!");
            assert_eq!(reply.headers["content-type"], "text/plain");
        }
        let reply = get2(&mut c2, server.addr, "/_poolbench/stats").await;
        let stats: poolbench_server::CounterValues = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(stats.requests, 4);
        assert_eq!(stats.connections_accepted, 2);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn concurrent_h2_streams() {
    within(async {
        let server = start(ServerConfig {
            delay: "20ms".parse().unwrap(),
            ..ServerConfig::default()
        })
        .await;
        let (client, _conn) = common::h2(server.addr).await;
        let addr = server.addr;
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let mut client = client.clone();
                tokio::spawn(async move { get2(&mut client, addr, "/").await.status })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap(), StatusCode::OK);
        }
        let stats = server.snapshot();
        assert_eq!(stats.requests, 20);
        assert_eq!(stats.connections_accepted, 1);
        assert!(stats.inflight_peak > 1, "streams overlap: {stats:?}");
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn body_size_is_honoured() {
    within(async {
        for size in [0usize, 1, 100, 70_000] {
            let server = start(ServerConfig {
                body_size: size,
                ..ServerConfig::default()
            })
            .await;
            let (mut client, _conn) = common::h1(server.addr).await;
            let reply = get1(&mut client, "/").await;
            assert_eq!(reply.body.len(), size);
            assert!(b"Hello, World!".starts_with(&reply.body[..size.min(13)]));
            server.stop().await;
        }
    })
    .await;
}

#[tokio::test]
async fn raw_http10_and_pipelined_requests() {
    within(async {
        let server = start(ServerConfig::default()).await;
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let one = "GET / HTTP/1.1\r\nhost: x\r\n\r\n";
        let last = "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
        stream
            .write_all(format!("{one}{one}{last}").as_bytes())
            .await
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).await.unwrap();
        assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
        assert_eq!(text.matches("Hello, World!").count(), 3);
        server.stop().await;
    })
    .await;
}
