//! The /_poolbench/stats endpoints.

use crate::common::{self, get1, send1, start, stats_over, within};
use http::{Method, StatusCode};
use poolbench_server::ServerConfig;

#[tokio::test]
async fn counts_requests_on_one_keepalive_connection() {
    within(async {
        let server = start(ServerConfig::default()).await;
        let (mut client, _conn) = common::h1(server.addr).await;
        const N: u64 = 25;
        for i in 0..N {
            let reply = get1(&mut client, &format!("/any/path/{i}")).await;
            assert_eq!(reply.status, StatusCode::OK);
        }
        let stats = stats_over(&mut client).await;
        assert_eq!(stats.connections_accepted, 1);
        assert_eq!(stats.connections_open, 1);
        assert_eq!(stats.connections_peak, 1);
        assert_eq!(stats.requests, N);
        assert_eq!(stats.inflight, 0);
        assert_eq!(stats.inflight_peak, 1);
        assert_eq!(stats.responses_failed, 0);
        // Stats requests themselves are not counted.
        let again = stats_over(&mut client).await;
        assert_eq!(again.requests, N);
        assert_eq!(again, server.snapshot());

        let reset = send1(&mut client, Method::POST, "/_poolbench/stats/reset").await;
        assert_eq!(reset.status, StatusCode::OK);
        assert_eq!(&reset.body[..], br#"{"reset":true}"#);
        let after = stats_over(&mut client).await;
        assert_eq!(after.connections_accepted, 0);
        assert_eq!(after.requests, 0);
        assert_eq!(after.responses_failed, 0);
        assert_eq!(after.connections_open, 1, "gauges survive a reset");
        assert_eq!(
            after.connections_peak, 1,
            "peak restarts from the open count"
        );
        assert_eq!(after.inflight_peak, 0);

        get1(&mut client, "/").await;
        assert_eq!(stats_over(&mut client).await.requests, 1);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn admin_errors() {
    within(async {
        let server = start(ServerConfig::default()).await;
        let (mut client, _conn) = common::h1(server.addr).await;
        let reply = send1(&mut client, Method::POST, "/_poolbench/stats").await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(reply.headers["allow"], "GET");
        let reply = get1(&mut client, "/_poolbench/stats/reset").await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
        let reply = get1(&mut client, "/_poolbench/nope").await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        let stats = stats_over(&mut client).await;
        assert_eq!(stats.requests, 0);
        assert_eq!(stats.connections_accepted, 1);
        server.stop().await;
    })
    .await;
}

#[tokio::test]
async fn peaks_and_open_connections() {
    within(async {
        let server = start(ServerConfig::default()).await;
        let mut clients = Vec::new();
        for _ in 0..4 {
            let (mut client, conn) = common::h1(server.addr).await;
            get1(&mut client, "/").await;
            clients.push((client, conn));
        }
        server.wait_for("4 open", |s| s.connections_open == 4).await;
        drop(clients);
        server.wait_for("0 open", |s| s.connections_open == 0).await;
        let stats = server.snapshot();
        assert_eq!(stats.connections_accepted, 4);
        assert_eq!(stats.connections_peak, 4);
        server.stats.reset();
        assert_eq!(server.snapshot().connections_peak, 0);
        server.stop().await;
    })
    .await;
}
