//! Connections leave the strategy when broken (marked by the caller or
//! reported by the connector), idle too long, too old, or surplus; prefill
//! opens ahead of demand.
//!
//! Expiry runs on `std::time::Instant`, so these tests use real time with
//! short limits. Tests named `*_on_checkout` build their strategy outside a
//! runtime, so that no background reaper runs and only checkouts and
//! returns can close connections.

use crate::common::{bounded, cfg, distinct_ids, runtime, strategy, take_all, Fake};
use poolbench_pool::PoolConfig;
use std::time::{Duration, Instant};

/// Every kind of strategy that keeps connections, and how many leases each
/// hands out at once.
const KEEPING: [(&str, usize); 7] = [
    ("pool:2", 2),
    ("elastic:1+1", 2),
    ("take-or-create:2", 2),
    ("partitioned:1x2", 2),
    ("shared", 1),
    ("round-robin:2", 2),
    ("least-loaded:2", 2),
];

fn no_expiry() -> PoolConfig {
    PoolConfig {
        idle_timeout: None,
        max_lifetime: None,
        ..cfg()
    }
}

fn dropped(fake: &Fake, id: u64) -> bool {
    fake.drops().iter().any(|&(d, _)| d == id)
}

/// Check out `rounds` times, one at a time and `capacity` at once, and
/// check `banned` is never handed out.
async fn never_again(
    spec: &str,
    pool: &poolbench_pool::Strategy<Fake>,
    capacity: usize,
    banned: u64,
) {
    for _ in 0..4 {
        let lease = pool.acquire().await.expect("checkout");
        assert_ne!(
            lease.id, banned,
            "{spec}: broken connection handed out again"
        );
    }
    let all = take_all(pool, capacity).await;
    assert!(
        !distinct_ids(&all).contains(&banned),
        "{spec}: broken connection handed out again"
    );
}

#[tokio::test]
async fn marked_broken_is_closed_and_never_handed_out_again() {
    bounded(async {
        for (spec, capacity) in KEEPING {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, no_expiry());
            let mut lease = pool.acquire().await.expect("checkout");
            let id = lease.id;
            lease.mark_broken();
            drop(lease);
            let m = pool.metrics();
            assert_eq!(m.closed_broken, 1, "{spec}: {m:?}");
            assert_eq!((m.open, m.in_use), (0, 0), "{spec}: {m:?}");
            assert!(dropped(&fake, id), "{spec}: connection {id} still open");
            assert_eq!(fake.live(), 0, "{spec}");
            never_again(spec, &pool, capacity, id).await;
            assert_eq!(pool.metrics().closed_broken, 1, "{spec}");
        }
    })
    .await;
}

/// The connector reports a connection broken while it is leased: it is
/// closed (on return, or at the latest before it would be handed out).
#[tokio::test]
async fn reported_broken_while_leased_is_never_handed_out_again() {
    bounded(async {
        for (spec, capacity) in KEEPING {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, no_expiry());
            let lease = pool.acquire().await.expect("checkout");
            let id = lease.id;
            fake.break_conn(id);
            drop(lease);
            never_again(spec, &pool, capacity, id).await;
            let m = pool.metrics();
            assert_eq!(m.closed_broken, 1, "{spec}: {m:?}");
            assert!(dropped(&fake, id), "{spec}: connection {id} still open");
            assert_eq!(fake.live(), m.open as i64, "{spec}");
        }
    })
    .await;
}

/// The connector reports an idle connection broken: the next checkout
/// skips it, closes it and gets another.
#[tokio::test]
async fn reported_broken_while_idle_is_never_handed_out_again() {
    bounded(async {
        for (spec, capacity) in KEEPING {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, no_expiry());
            let id = pool.acquire().await.expect("checkout").id;
            assert_eq!(pool.idle(), 1, "{spec}");
            fake.break_conn(id);
            never_again(spec, &pool, capacity, id).await;
            let m = pool.metrics();
            assert_eq!(m.closed_broken, 1, "{spec}: {m:?}");
            assert!(dropped(&fake, id), "{spec}: connection {id} still open");
        }
    })
    .await;
}

/// Exclusive strategies close a connection reported broken as soon as it
/// is returned, rather than keeping it idle.
#[tokio::test]
async fn reported_broken_is_closed_on_return() {
    bounded(async {
        for spec in [
            "pool:2",
            "elastic:1+1",
            "take-or-create:2",
            "partitioned:2x1",
        ] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, no_expiry());
            let lease = pool.acquire().await.expect("checkout");
            fake.break_conn(lease.id);
            drop(lease);
            let m = pool.metrics();
            assert_eq!((m.closed_broken, m.open), (1, 0), "{spec}: {m:?}");
            assert_eq!(pool.idle(), 0, "{spec}");
            assert_eq!(fake.live(), 0, "{spec}");
        }
    })
    .await;
}

#[test]
fn idle_timeout_closes_on_checkout() {
    let fake = Fake::new();
    let limit = Duration::from_millis(100);
    let config = PoolConfig {
        idle_timeout: Some(limit),
        ..no_expiry()
    };
    let pools: Vec<_> = ["pool:2", "elastic:1+1", "take-or-create:2"]
        .into_iter()
        .map(|spec| (spec, strategy(spec, &fake, config.clone())))
        .collect();
    runtime().block_on(bounded(async {
        for (spec, pool) in &pools {
            let returned = Instant::now();
            let first = pool.acquire().await.expect("checkout").id;
            let again = pool.acquire().await.expect("checkout").id;
            if returned.elapsed() < limit {
                assert_eq!(again, first, "{spec}: a fresh idle connection is reused");
            }
            assert_eq!(pool.metrics().closed_idle, 0, "{spec}");
            tokio::time::sleep(limit + Duration::from_millis(30)).await;
            assert_eq!(pool.idle(), 1, "{spec}: no reaper runs here");
            let next = pool.acquire().await.expect("checkout").id;
            assert_ne!(next, first, "{spec}: an idle-expired connection was reused");
            let m = pool.metrics();
            assert_eq!(m.closed_idle, 1, "{spec}: {m:?}");
            assert_eq!(m.open, 1, "{spec}: {m:?}");
            assert!(dropped(&fake, first), "{spec}");
        }
    }));
}

#[tokio::test]
async fn idle_timeout_closes_via_reaper() {
    bounded(async {
        let limit = Duration::from_millis(60);
        let config = PoolConfig {
            idle_timeout: Some(limit),
            ..no_expiry()
        };
        for (spec, capacity) in [("pool:2", 2), ("elastic:1+1", 2), ("partitioned:2x1", 2)] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, config.clone());
            drop(take_all(&pool, capacity).await);
            let returned = Instant::now();
            assert_eq!(pool.idle(), capacity, "{spec}");
            fake.until("idle connections are closed", |s| {
                s.live() == 0 && pool.metrics().open == 0
            })
            .await;
            assert!(
                returned.elapsed() >= limit,
                "{spec}: closed after {:?}, before the idle timeout",
                returned.elapsed()
            );
            let m = pool.metrics();
            assert_eq!(m.closed_idle, capacity as u64, "{spec}: {m:?}");
            assert_eq!((m.open, m.closed()), (0, capacity as u64), "{spec}: {m:?}");
            assert_eq!(pool.idle(), 0, "{spec}");
        }
    })
    .await;
}

fn lifetime(life: Duration, jitter: f64) -> PoolConfig {
    PoolConfig {
        max_lifetime: Some(life),
        lifetime_jitter: jitter,
        idle_timeout: None,
        // The reaper runs every half of this (at least every 5 ms).
        overflow_grace: Duration::from_millis(20),
        ..cfg()
    }
}

/// A connection that outlives its lifetime while leased is closed when
/// returned (exclusive strategies) or before its slot is used again.
#[test]
fn max_lifetime_closes_a_connection_that_expired_while_leased() {
    let fake = Fake::new();
    let life = Duration::from_millis(60);
    let pools: Vec<_> = [
        ("pool:1", 1),
        ("elastic:1+1", 1),
        ("take-or-create:1", 1),
        ("shared", 1),
        ("round-robin:2", 2),
    ]
    .into_iter()
    .map(|(spec, n)| (spec, n, strategy(spec, &fake, lifetime(life, 0.0))))
    .collect();
    runtime().block_on(bounded(async {
        for (spec, slots, pool) in &pools {
            let lease = pool.acquire().await.expect("checkout");
            let id = lease.id;
            tokio::time::sleep(life + Duration::from_millis(20)).await;
            drop(lease);
            for _ in 0..*slots {
                let next = pool.acquire().await.expect("checkout");
                assert_ne!(next.id, id, "{spec}: an expired connection was reused");
            }
            let m = pool.metrics();
            assert_eq!(m.closed_lifetime, 1, "{spec}: {m:?}");
            assert!(dropped(&fake, id), "{spec}");
        }
    }));
}

#[test]
fn max_lifetime_closes_idle_on_checkout() {
    let fake = Fake::new();
    let life = Duration::from_millis(60);
    let pools: Vec<_> = ["pool:1", "elastic:1+1", "take-or-create:1", "shared"]
        .into_iter()
        .map(|spec| (spec, strategy(spec, &fake, lifetime(life, 0.0))))
        .collect();
    runtime().block_on(bounded(async {
        for (spec, pool) in &pools {
            let id = pool.acquire().await.expect("checkout").id;
            tokio::time::sleep(life + Duration::from_millis(20)).await;
            assert_eq!(pool.idle(), 1, "{spec}: no reaper runs here");
            let next = pool.acquire().await.expect("checkout").id;
            assert_ne!(next, id, "{spec}: an expired connection was reused");
            let m = pool.metrics();
            assert_eq!((m.closed_lifetime, m.open), (1, 1), "{spec}: {m:?}");
            assert!(dropped(&fake, id), "{spec}");
        }
    }));
}

/// Open `n` connections at once on `pool:n`, return them, and let the
/// reaper close them at the end of their lifetimes. Returns each
/// connection's lifetime, from open to close.
async fn lifetimes(n: usize, life: Duration, jitter: f64) -> Vec<Duration> {
    let fake = Fake::new();
    let pool = strategy(&format!("pool:{n}"), &fake, lifetime(life, jitter));
    let held = take_all(&pool, n).await;
    let opened: std::collections::HashMap<u64, Instant> =
        held.iter().map(|l| (l.id, l.opened_at)).collect();
    drop(held);
    fake.until("every connection reached its lifetime", |s| {
        s.live() == 0 && pool.metrics().open == 0
    })
    .await;
    let m = pool.metrics();
    assert_eq!(m.closed_lifetime, n as u64, "{m:?}");
    fake.drops()
        .into_iter()
        .map(|(id, at)| at.duration_since(opened[&id]))
        .collect()
}

#[tokio::test]
async fn lifetime_jitter_spreads_expiry() {
    bounded(async {
        let life = Duration::from_millis(200);
        let n = 32;
        let spread = |ls: &[Duration]| *ls.iter().max().unwrap() - *ls.iter().min().unwrap();

        let exact = lifetimes(n, life, 0.0).await;
        assert!(
            exact.iter().all(|&l| l >= life),
            "closed before the lifetime: {exact:?}"
        );
        assert!(
            spread(&exact) < Duration::from_millis(30),
            "without jitter, connections opened together expire together: {exact:?}"
        );

        let jittered = lifetimes(n, life, 0.5).await;
        assert!(
            jittered.iter().all(|&l| l >= life / 2),
            "closed before (1 - jitter) x lifetime: {jittered:?}"
        );
        assert!(
            jittered
                .iter()
                .all(|&l| l <= life * 3 / 2 + Duration::from_millis(100)),
            "closed long after (1 + jitter) x lifetime: {jittered:?}"
        );
        assert!(
            spread(&jittered) > Duration::from_millis(60),
            "with jitter 0.5, expiries should spread over ~200 ms: {jittered:?}"
        );
        let shorter = jittered.iter().filter(|&&l| l < life).count();
        assert!(
            shorter > 0 && shorter < n,
            "jitter both shortens and lengthens lifetimes: {jittered:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn elastic_overflow_closes_after_grace_and_core_stays() {
    bounded(async {
        let grace = Duration::from_millis(150);
        let config = PoolConfig {
            overflow_grace: grace,
            ..no_expiry()
        };
        let fake = Fake::new();
        let pool = strategy("elastic:2+2", &fake, config);
        let held = take_all(&pool, 4).await;
        assert_eq!(pool.metrics().waited, 0, "overflow opens without waiting");
        drop(held);
        let returned = Instant::now();
        let m = pool.metrics();
        if returned.elapsed() < grace {
            assert_eq!((m.closed_overflow, m.open), (0, 4), "{m:?}");
            assert_eq!(pool.idle(), 4);
        }
        fake.until("overflow connections are closed", |s| {
            s.live() <= 2 && pool.metrics().open <= 2
        })
        .await;
        assert!(
            returned.elapsed() >= grace,
            "overflow closed after {:?}, within its grace",
            returned.elapsed()
        );
        // Core connections stay, however long they idle.
        tokio::time::sleep(grace * 2).await;
        let m = pool.metrics();
        assert_eq!((m.closed_overflow, m.closed(), m.open), (2, 2, 2), "{m:?}");
        assert_eq!(pool.idle(), 2);
        assert_eq!(fake.live(), 2);
        let again = take_all(&pool, 2).await;
        assert_eq!(pool.metrics().opened, 4, "the core connections are reused");
        drop(again);
    })
    .await;
}

/// Overflow is counted over all open connections: with the core leased,
/// idle connections above it are closed after the grace; once everything
/// is back, the strategy keeps exactly its core.
#[tokio::test]
async fn elastic_overflow_counts_leased_connections() {
    bounded(async {
        let grace = Duration::from_millis(50);
        let config = PoolConfig {
            overflow_grace: grace,
            ..no_expiry()
        };
        let fake = Fake::new();
        let pool = strategy("elastic:2+2", &fake, config);
        let mut held = take_all(&pool, 4).await;
        let back: Vec<_> = held.drain(2..).collect();
        drop(back);
        fake.until("idle overflow is closed", |s| {
            s.live() == 2 && pool.metrics().open == 2
        })
        .await;
        let m = pool.metrics();
        assert_eq!((m.closed_overflow, m.open, m.in_use), (2, 2, 2), "{m:?}");
        drop(held);
        tokio::time::sleep(grace * 3).await;
        let m = pool.metrics();
        assert_eq!((m.closed_overflow, m.open), (2, 2), "core stays: {m:?}");
    })
    .await;
}

#[tokio::test]
async fn take_or_create_keeps_at_most_n_idle() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("take-or-create:2", &fake, no_expiry());
        let held = take_all(&pool, 5).await;
        assert_eq!(distinct_ids(&held).len(), 5);
        let m = pool.metrics();
        assert_eq!(
            (m.waited, m.opened, m.in_use),
            (0, 5, 5),
            "never waits: {m:?}"
        );
        drop(held);
        let m = pool.metrics();
        assert_eq!(pool.idle(), 2);
        assert_eq!((m.open, m.closed_overflow), (2, 3), "{m:?}");
        assert_eq!(fake.live(), 2);
        let again = take_all(&pool, 3).await;
        assert_eq!(pool.metrics().opened, 6, "two idle reused, one opened");
        drop(again);
        assert_eq!(pool.idle(), 2);
    })
    .await;
}

#[tokio::test]
async fn prefill_opens_min_idle() {
    bounded(async {
        for (spec, min_idle, expect) in [
            ("pool:4", 3, 3),
            ("pool:4", 10, 4),
            ("elastic:2+2", 3, 3),
            ("take-or-create:2", 5, 2),
            ("partitioned:2x2", 2, 4),
            ("per-request", 2, 0),
            ("shared", 2, 0),
            ("round-robin:2", 2, 0),
            ("pool:4", 0, 0),
        ] {
            let fake = Fake::new();
            let config = PoolConfig {
                min_idle,
                ..no_expiry()
            };
            let pool = strategy(spec, &fake, config);
            let opened = pool.prefill().await.expect("prefill");
            assert_eq!(opened, expect, "{spec} min_idle {min_idle}");
            assert_eq!(pool.idle(), expect, "{spec} min_idle {min_idle}");
            let m = pool.metrics();
            assert_eq!(
                (m.opened, m.open),
                (expect as u64, expect as u64),
                "{spec}: {m:?}"
            );
            assert_eq!(fake.live(), expect as i64, "{spec}");
            assert_eq!(
                pool.prefill().await.expect("prefill"),
                0,
                "{spec}: already filled"
            );
            if expect > 0 {
                let lease = pool.acquire().await.expect("checkout");
                assert!(
                    lease.id <= expect as u64,
                    "{spec}: a prefilled connection is used"
                );
                assert_eq!(pool.metrics().opened, expect as u64, "{spec}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn prefill_reports_connect_errors() {
    bounded(async {
        let fake = Fake::new();
        let config = PoolConfig {
            min_idle: 3,
            ..no_expiry()
        };
        let pool = strategy("pool:4", &fake, config);
        fake.fail_next(1);
        assert!(pool.prefill().await.is_err());
        assert_eq!(pool.metrics().connect_errors, 1);
        assert_eq!(pool.prefill().await.expect("prefill"), 3);
    })
    .await;
}

/// `pool:N` opens at most N connections, prefill included: prefilling a
/// pool whose connections are all leased must not open more.
#[tokio::test]
async fn prefill_never_exceeds_pool_size() {
    bounded(async {
        for (spec, capacity) in [("pool:2", 2), ("elastic:1+1", 2), ("partitioned:2x1", 2)] {
            let fake = Fake::new();
            let config = PoolConfig {
                min_idle: 2,
                ..no_expiry()
            };
            let pool = strategy(spec, &fake, config);
            let held = take_all(&pool, capacity).await;
            let _ = pool.prefill().await;
            let m = pool.metrics();
            assert!(
                m.open <= capacity as u64 && fake.live() <= capacity as i64,
                "{spec}: {} connections open with all {capacity} leased after prefill: {m:?}",
                fake.live()
            );
            drop(held);
            assert!(pool.metrics().open <= capacity as u64, "{spec}");
        }
    })
    .await;
}

#[tokio::test]
async fn close_idle_closes_only_idle_connections() {
    bounded(async {
        for (spec, capacity) in [("pool:3", 3), ("elastic:2+1", 3), ("round-robin:3", 3)] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, no_expiry());
            let mut held = take_all(&pool, capacity).await;
            let kept = held.pop().expect("one kept");
            drop(held);
            assert_eq!(pool.idle(), capacity - 1, "{spec}");
            pool.close_idle();
            let m = pool.metrics();
            assert_eq!(pool.idle(), 0, "{spec}");
            assert_eq!(m.closed_released, capacity as u64 - 1, "{spec}: {m:?}");
            assert_eq!((m.open, m.in_use), (1, 1), "{spec}: {m:?}");
            assert_eq!(fake.live(), 1, "{spec}");
            let id = kept.id;
            drop(kept);
            assert_eq!(pool.idle(), 1, "{spec}: the leased one is kept");
            assert!(!dropped(&fake, id), "{spec}");
        }
    })
    .await;
}

/// With the reaper running (strategy built inside the runtime), a
/// connection past its lifetime is still never handed out, nor kept when
/// returned, whatever the reaper's period. (Here the reaper ticks every
/// 500 ms, set by the default overflow grace; the lifetime is 50 ms.)
#[tokio::test]
async fn expired_connection_is_not_reused_between_reaper_ticks() {
    bounded(async {
        let life = Duration::from_millis(50);
        let config = PoolConfig {
            idle_timeout: None,
            ..lifetime(life, 0.0)
        };
        let config = PoolConfig {
            overflow_grace: PoolConfig::default().overflow_grace,
            ..config
        };
        for spec in [
            "pool:1",
            "elastic:1+1",
            "take-or-create:1",
            "partitioned:1x1",
        ] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, config.clone());
            // Idle past its lifetime.
            let id = pool.acquire().await.expect("checkout").id;
            tokio::time::sleep(life + Duration::from_millis(30)).await;
            let lease = pool.acquire().await.expect("checkout");
            assert_ne!(
                lease.id, id,
                "{spec}: handed out a connection 30 ms past its lifetime"
            );
            // Leased past its lifetime.
            let id = lease.id;
            tokio::time::sleep(life + Duration::from_millis(30)).await;
            drop(lease);
            let next = pool.acquire().await.expect("checkout");
            assert_ne!(
                next.id, id,
                "{spec}: kept a connection returned 30 ms past its lifetime"
            );
            let m = pool.metrics();
            assert_eq!(m.closed_lifetime, 2, "{spec}: {m:?}");
        }
    })
    .await;
}

/// Return `n` connections one every 7 ms, then wait until the strategy has
/// closed all but `keep`. Returns how long each closed one had been idle
/// (from just before its return to its close).
async fn idle_before_close(spec: &str, config: PoolConfig, n: usize, keep: usize) -> Vec<Duration> {
    let fake = Fake::new();
    let pool = strategy(spec, &fake, config);
    let held = take_all(&pool, n).await;
    let mut returned = std::collections::HashMap::new();
    for lease in held {
        returned.insert(lease.id, Instant::now());
        drop(lease);
        tokio::time::sleep(Duration::from_millis(7)).await;
    }
    let keep = keep as i64;
    fake.until("the strategy closes what it does not keep", |s| {
        s.live() == keep && pool.metrics().open == keep as u64
    })
    .await;
    fake.drops()
        .into_iter()
        .map(|(id, at)| at.duration_since(returned[&id]))
        .collect()
}

/// No connection is closed for idling before it has idled `idle_timeout`,
/// whenever it was returned relative to the reaper's ticks.
#[tokio::test]
async fn idle_timeout_never_closes_early() {
    bounded(async {
        let limit = Duration::from_millis(60);
        let config = PoolConfig {
            idle_timeout: Some(limit),
            ..no_expiry()
        };
        for spec in ["pool:6", "take-or-create:6"] {
            let idled = idle_before_close(spec, config.clone(), 6, 0).await;
            assert_eq!(idled.len(), 6, "{spec}");
            assert!(
                idled.iter().all(|&d| d >= limit),
                "{spec}: closed for idling {limit:?} after idling only {idled:?}"
            );
        }
    })
    .await;
}

/// No overflow connection is closed before it has idled `overflow_grace`.
#[tokio::test]
async fn overflow_grace_never_closes_early() {
    bounded(async {
        let grace = Duration::from_millis(60);
        let config = PoolConfig {
            overflow_grace: grace,
            ..no_expiry()
        };
        let idled = idle_before_close("elastic:1+6", config, 7, 1).await;
        assert_eq!(idled.len(), 6);
        assert!(
            idled.iter().all(|&d| d >= grace),
            "overflow closed after idling only {idled:?}, grace {grace:?}"
        );
    })
    .await;
}
