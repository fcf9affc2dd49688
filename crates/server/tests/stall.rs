//! `stall`: the whole server freezes at the start of every period.

use std::time::{Duration, Instant};

use crate::common::{self, get1, start, within};
use poolbench_server::{ConfigError, ServerConfig};

#[tokio::test]
async fn responses_wait_out_the_stall_and_flow_between_stalls() {
    within(async {
        let started = Instant::now();
        let server = start(ServerConfig {
            stall: Duration::from_millis(400),
            stall_every: Duration::from_millis(1000),
            ..ServerConfig::default()
        })
        .await;
        let (mut client, _conn) = common::h1(server.addr).await;
        // Inside the first stall: held until it ends, 400 ms after start.
        get1(&mut client, "/").await;
        let first = started.elapsed();
        assert!(first >= Duration::from_millis(390), "answered at {first:?}");
        // Between stalls: prompt.
        let t = Instant::now();
        get1(&mut client, "/").await;
        assert!(
            t.elapsed() < Duration::from_millis(150),
            "took {:?}",
            t.elapsed()
        );
        // The next period starts frozen again.
        tokio::time::sleep_until((started + Duration::from_millis(1050)).into()).await;
        let t = Instant::now();
        get1(&mut client, "/").await;
        assert!(
            t.elapsed() >= Duration::from_millis(250),
            "took {:?}",
            t.elapsed()
        );
        server.stop().await;
    })
    .await;
}

#[test]
fn a_stall_as_long_as_its_period_is_rejected() {
    let config = ServerConfig {
        stall: Duration::from_secs(5),
        stall_every: Duration::from_secs(5),
        ..ServerConfig::default()
    };
    assert_eq!(config.validate(), Err(ConfigError::Stall));
}
