//! When a connection was given back, as the next lease reports it
//! (`Lease::returned_at`): the holder's own clock reading where it gave one.

use crate::common::{bounded, cfg, strategy, Fake};
use poolbench_pool::PoolConfig;
use std::time::{Duration, Instant};

/// A holder's own clock reading at the end of its use (`done_at`) is the
/// time the connection was given back, as the next lease reports it; without
/// one the pool reads the clock at check-in.
#[tokio::test]
async fn a_lease_given_back_at_the_holders_time_reports_it_next() {
    bounded(async {
        let fake = Fake::default();
        let config = PoolConfig {
            idle_timeout: None,
            max_lifetime: None,
            ..cfg()
        };
        for spec in [
            "pool:1",
            "elastic:1+0",
            "take-or-create:1",
            "partitioned:1x1",
        ] {
            let pool = strategy(spec, &fake, config.clone());
            let mut lease = pool.acquire().await.expect("checkout");
            assert_eq!(lease.returned_at(), None, "{spec}: a fresh connection");
            assert!(lease.take_connect_time().is_some(), "{spec}: opened for it");
            let at = Instant::now() - Duration::from_millis(250);
            lease.done_at(at);
            drop(lease);
            let lease = pool.acquire().await.expect("checkout");
            assert_eq!(lease.returned_at(), Some(at), "{spec}");
            let before = Instant::now();
            drop(lease);
            let lease = pool.acquire().await.expect("checkout");
            let back = lease.returned_at().expect("given back before");
            assert!(
                back >= before,
                "{spec}: stamped at check-in without done_at"
            );
        }
    })
    .await;
}
