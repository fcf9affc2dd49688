//! What each strategy does with requests, and strategy names.

use crate::common::{self, bounded, cfg, distinct_ids, poll_once, spec, strategy, take_all, Fake};
use poolbench_pool::{AcquireError, BuildError, PoolConfig, PoolSpec, Strategy};
use std::time::Duration;

#[tokio::test]
async fn round_robin_sends_request_i_to_connection_i_mod_n() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("round-robin:3", &fake, cfg());
        // One at a time: slot i connects on first use, as connection i+1.
        let ids: Vec<u64> = {
            let mut ids = Vec::new();
            for _ in 0..9 {
                ids.push(pool.acquire().await.expect("checkout").id);
            }
            ids
        };
        assert_eq!(ids, [1, 2, 3, 1, 2, 3, 1, 2, 3]);
        // Held together: the next three requests are 9, 10, 11 → slots 0, 1, 2.
        let held = take_all(&pool, 3).await;
        let ids: Vec<u64> = held.iter().map(|l| l.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        // Request 12 goes to slot 0, which is busy: it waits, even though
        // no other slot is free either way.
        assert!(poll_once(pool.acquire()).await.is_none());
        drop(held);
        // Request 13 goes to slot 1.
        assert_eq!(pool.acquire().await.expect("checkout").id, 2);
        let m = pool.metrics();
        assert_eq!((m.opened, m.open), (3, 3), "{m:?}");
    })
    .await;
}

#[tokio::test]
async fn round_robin_takes_the_callers_turn_when_given_one() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("round-robin:3", &fake, cfg());
        // Slots connect on first use: slot 2 first, as connection 1.
        let ids: Vec<u64> = {
            let mut ids = Vec::new();
            for turn in [2, 0, 1, 5, 3, 4, 7] {
                ids.push(pool.acquire_turn(9, turn).await.expect("checkout").id);
            }
            ids
        };
        assert_eq!(ids, [1, 2, 3, 1, 2, 3, 3]);
        // The shared counter did not move: unturned requests start at slot 0.
        assert_eq!(pool.acquire().await.expect("checkout").id, 2);
        // A turn on a busy slot waits there.
        let held = pool.acquire_turn(0, 1).await.expect("checkout");
        assert!(poll_once(pool.acquire_turn(0, 4)).await.is_none());
        drop(held);
        // Other strategies ignore the turn, not the key.
        let parts = strategy("partitioned:2x1", &fake, cfg());
        let a = parts.acquire_turn(0, 0).await.expect("checkout").id;
        let b = parts.acquire_turn(0, 1).await.expect("checkout").id;
        assert_eq!(a, b, "partition by key 0 both times");
    })
    .await;
}

#[tokio::test]
async fn least_loaded_picks_the_slot_with_fewest_in_flight() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("least-loaded:3", &fake, cfg());
        let mut held = take_all(&pool, 3).await;
        assert_eq!(
            distinct_ids(&held),
            [1, 2, 3],
            "each request took an empty slot"
        );
        // Free one slot at a time: the next request goes to it at once,
        // whichever slot the round-robin cursor points at.
        for k in [1usize, 2, 0, 2, 1, 1, 0, 2] {
            let lease = held.remove(k);
            let freed = lease.id;
            drop(lease);
            let next = poll_once(pool.acquire())
                .await
                .unwrap_or_else(|| panic!("the request waited instead of taking free slot {freed}"))
                .expect("checkout");
            assert_eq!(next.id, freed, "the only idle slot has fewest in flight");
            held.insert(k, next);
        }
        assert_eq!(pool.metrics().waited, 0);
        assert_eq!(pool.metrics().opened, 3);
    })
    .await;
}

/// With every slot busy, waiting requests spread: each goes to a slot with
/// the fewest requests waiting or in flight.
#[tokio::test]
async fn least_loaded_spreads_waiters() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("least-loaded:3", &fake, cfg());
        let held = take_all(&pool, 3).await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (pool, tx, flag) = (pool.clone(), tx.clone(), started.clone());
            tasks.push(tokio::spawn(async move {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                let lease = pool.acquire().await.expect("waiter");
                let _ = tx.send(lease.id);
                // Keep the slot until the test ends.
                std::future::pending::<()>().await;
                drop(lease);
            }));
            common::until_set(&started).await;
        }
        // Return one connection: exactly one waiter is queued on its slot.
        let mut held = held;
        let freed = held.remove(0).id;
        let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("a waiter was served")
            .expect("channel open");
        assert_eq!(got, freed);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(rx.try_recv().is_err(), "only one waiter per slot");
        drop(held);
        let mut rest = vec![got];
        for _ in 0..2 {
            rest.push(rx.recv().await.expect("served"));
        }
        rest.sort_unstable();
        assert_eq!(rest, [1, 2, 3], "the three waiters waited on three slots");
        for t in &tasks {
            t.abort();
        }
    })
    .await;
}

#[tokio::test]
async fn shared_uses_one_connection_for_everything() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("shared", &fake, cfg());
        for _ in 0..5 {
            assert_eq!(pool.acquire().await.expect("checkout").id, 1);
        }
        let m = pool.metrics();
        assert_eq!((m.opened, m.open, m.checkouts), (1, 1, 5), "{m:?}");
    })
    .await;
}

#[tokio::test]
async fn partitioned_uses_partition_key_mod_k() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("partitioned:3x2", &fake, cfg());
        // Keys 0..6 fill each partition k with keys k and k+3.
        let mut held = Vec::new();
        for key in 0..6 {
            let lease = poll_once(pool.acquire_keyed(key))
                .await
                .unwrap_or_else(|| panic!("key {key} waited"))
                .expect("checkout");
            held.push(lease);
        }
        distinct_ids(&held);
        for key in [0, 1, 2, 7, 100, usize::MAX] {
            assert!(
                poll_once(pool.acquire_keyed(key)).await.is_none(),
                "key {key}: every partition is full"
            );
        }
        let m = pool.metrics();
        assert_eq!((m.open, m.peak_open, m.in_use), (6, 6, 6), "{m:?}");

        // Return key 4's connection (partition 1): key 7 gets it at once,
        // keys of other partitions still wait.
        let freed = held.remove(4).id;
        drop(held.pop());
        assert!(
            poll_once(pool.acquire_keyed(3)).await.is_none(),
            "partition 0 is full"
        );
        let again = poll_once(pool.acquire_keyed(7))
            .await
            .expect("partition 1 has an idle connection")
            .expect("checkout");
        assert_eq!(again.id, freed);
        drop(again);
        // usize::MAX mod 3 == 0: partition 0, full.
        assert!(poll_once(pool.acquire_keyed(usize::MAX)).await.is_none());
        drop(held);
        let m = pool.metrics();
        assert!(m.peak_open <= 6, "{m:?}");
        assert_eq!(fake.peak_live(), 6);
    })
    .await;
}

#[tokio::test]
async fn partitioned_caps_each_partition_at_n() {
    bounded(async {
        let fake = Fake::new();
        let config = PoolConfig {
            checkout_timeout: Duration::from_millis(50),
            ..cfg()
        };
        let pool = strategy("partitioned:2x2", &fake, config);
        let a = pool.acquire_keyed(0).await.expect("checkout");
        let b = pool.acquire_keyed(2).await.expect("checkout");
        // Partition 0 is full though partition 1 is empty.
        let r = pool.acquire_keyed(4).await.map(|l| l.id);
        assert!(matches!(r, Err(AcquireError::Timeout(_))), "{r:?}");
        let c = pool.acquire_keyed(1).await.expect("partition 1 is free");
        assert_eq!(distinct_ids(&[a, b, c]), [1, 2, 3]);
        let m = pool.metrics();
        assert!(m.peak_open <= 4, "{m:?}");
        assert_eq!(m.timeouts, 1, "{m:?}");
    })
    .await;
}

#[tokio::test]
async fn partitioned_without_key_spreads_over_partitions() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("partitioned:3x1", &fake, cfg());
        let held = take_all(&pool, 3).await;
        assert_eq!(distinct_ids(&held).len(), 3);
        assert!(
            poll_once(pool.acquire()).await.is_none(),
            "all three are full"
        );
        assert!(fake.peak_live() <= 3);
    })
    .await;
}

#[tokio::test]
async fn other_strategies_ignore_the_key() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("pool:1", &fake, cfg());
        let a = pool.acquire_keyed(5).await.expect("checkout").id;
        let b = pool.acquire_keyed(6).await.expect("checkout").id;
        assert_eq!(a, b);
        let rr = strategy("round-robin:2", &fake, cfg());
        let x = rr.acquire_keyed(0).await.expect("checkout").id;
        let y = rr.acquire_keyed(0).await.expect("checkout").id;
        assert_ne!(x, y, "round-robin turns, whatever the key");
    })
    .await;
}

#[tokio::test]
async fn per_request_opens_and_closes_one_connection_per_checkout() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("per-request", &fake, cfg());
        for i in 1..=3u64 {
            let lease = pool.acquire().await.expect("checkout");
            assert_eq!(lease.id, i, "a new connection each time");
            assert_eq!(fake.live(), 1);
            drop(lease);
            assert_eq!(fake.live(), 0, "closed on return");
            let m = pool.metrics();
            assert_eq!((m.opened, m.closed_released, m.open), (i, i, 0), "{m:?}");
            assert_eq!(pool.idle(), 0);
        }
        let held = take_all(&pool, 4).await;
        assert_eq!(
            distinct_ids(&held),
            [4, 5, 6, 7],
            "never waits, never shares"
        );
        assert_eq!(pool.metrics().waited, 0);
        drop(held);
        let m = pool.metrics();
        assert_eq!((m.opened, m.closed_released, m.open), (7, 7, 0), "{m:?}");
        let mut lease = pool.acquire().await.expect("checkout");
        lease.mark_broken();
        drop(lease);
        let m = pool.metrics();
        assert_eq!((m.closed_broken, m.closed_released), (1, 7), "{m:?}");
        assert_eq!(fake.live(), 0);
    })
    .await;
}

#[tokio::test]
async fn pool_reuses_and_bounds() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("pool:3", &fake, cfg());
        let held = take_all(&pool, 3).await;
        assert_eq!(distinct_ids(&held), [1, 2, 3]);
        assert!(poll_once(pool.acquire()).await.is_none(), "pool:3 is full");
        drop(held);
        assert_eq!(pool.idle(), 3);
        let again = take_all(&pool, 3).await;
        assert_eq!(distinct_ids(&again), [1, 2, 3], "reused, not reopened");
        let m = pool.metrics();
        assert_eq!(
            (m.opened, m.checkouts, m.peak_open, m.peak_in_use),
            (3, 6, 3, 3),
            "{m:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn lease_derefs_to_the_connection() {
    bounded(async {
        let fake = Fake::new();
        for spec in ["pool:1", "shared"] {
            let pool = strategy(spec, &fake, cfg());
            let mut lease = pool.acquire().await.expect("checkout");
            let shared: *const common::Conn = {
                let conn: &common::Conn = &lease;
                conn
            };
            let exclusive: *const common::Conn = {
                let conn: &mut common::Conn = &mut lease;
                conn
            };
            assert_eq!(
                shared, exclusive,
                "{spec}: Deref and DerefMut reach one connection"
            );
            let id = lease.id;
            drop(lease);
            assert_eq!(pool.acquire().await.expect("checkout").id, id, "{spec}");
        }
    })
    .await;
}

const NAMES: [&str; 14] = [
    "per-request",
    "shared",
    "round-robin:4",
    "least-loaded:4",
    "pool:8",
    "elastic:4+2",
    "elastic:4+0",
    "take-or-create:3",
    "partitioned:2x4",
    "round-robin",
    "least-loaded",
    "pool",
    "elastic",
    "take-or-create",
];

#[test]
fn spec_display_round_trips() {
    let more = ["partitioned"];
    for name in NAMES.iter().chain(&more) {
        let parsed: PoolSpec = spec(name);
        assert_eq!(parsed.to_string(), *name, "display of {name}");
        assert_eq!(spec(&parsed.to_string()), parsed, "reparse of {name}");
        assert_eq!(String::from(parsed), *name);
        assert_eq!(PoolSpec::try_from(name.to_string()), Ok(parsed));
        assert!(
            name.starts_with(parsed.kind()),
            "{name}: kind {}",
            parsed.kind()
        );
        assert_eq!(
            parsed.needs_size(),
            !name.contains(':') && !matches!(*name, "per-request" | "shared"),
            "{name}"
        );
    }
}

#[test]
fn spec_parses_to_the_right_strategy() {
    use PoolSpec::*;
    let cases = [
        ("per-request", PerRequest),
        ("shared", Shared),
        ("round-robin:4", RoundRobin(Some(4))),
        ("least-loaded:4", LeastLoaded(Some(4))),
        ("pool:8", Pool(Some(8))),
        ("elastic:4+2", Elastic(Some(4), Some(2))),
        ("elastic:4", Elastic(Some(4), Some(2))),
        ("elastic:1", Elastic(Some(1), Some(1))),
        ("take-or-create:3", TakeOrCreate(Some(3))),
        ("partitioned:2x4", Partitioned(Some(2), Some(4))),
        ("partitioned:2X4", Partitioned(Some(2), Some(4))),
        (" pool:8 ", Pool(Some(8))),
        ("pool", Pool(None)),
    ];
    for (name, want) in cases {
        assert_eq!(spec(name), want, "{name:?}");
    }
    assert_eq!(spec("elastic:4").to_string(), "elastic:4+2");
    assert_eq!(spec("partitioned:2x4").size(), Some(8));
    assert_eq!(spec("elastic:4+2").size(), Some(4));
    assert_eq!(spec("shared").size(), None);
    assert_eq!(spec("pool").size(), None);
}

/// The library baselines are poolbench's model's names, not the pool's:
/// the pool's own type does not read them, so it cannot be handed one.
#[test]
fn library_baselines_are_not_the_pool_s_names() {
    for name in ["deadpool:2", "bb8:2", "mysql-async:2"] {
        assert!(name.parse::<PoolSpec>().is_err(), "{name}");
    }
}

#[test]
fn spec_rejects_bad_names() {
    for bad in [
        "pool:0",
        "lifo:3",
        "partitioned:3",
        "partitioned:0x2",
        "partitioned:2x0",
        "round-robin:0",
        "pool:x",
        "pool:-1",
        "pool:",
        "elastic:0+1",
        "elastic:2+x",
        "shared:2",
        "per-request:1",
        "",
    ] {
        let e = bad
            .parse::<PoolSpec>()
            .expect_err(&format!("{bad:?} should be rejected"));
        assert!(e.to_string().contains(bad.trim()), "{bad:?}: {e}");
    }
}

#[test]
fn with_size_fills_in_a_missing_size() {
    assert_eq!(spec("pool").with_size(8), spec("pool:8"));
    assert_eq!(spec("round-robin").with_size(3), spec("round-robin:3"));
    assert_eq!(spec("least-loaded").with_size(3), spec("least-loaded:3"));
    assert_eq!(
        spec("take-or-create").with_size(3),
        spec("take-or-create:3")
    );
    assert_eq!(spec("elastic").with_size(8), spec("elastic:8+4"));
    assert_eq!(spec("partitioned").with_size(8), spec("partitioned:2x4"));
    assert_eq!(spec("partitioned").with_size(1), spec("partitioned:1x1"));
    assert_eq!(spec("pool:2").with_size(8), spec("pool:2"), "sized stays");
    assert_eq!(spec("shared").with_size(8), spec("shared"));
    for name in NAMES {
        assert!(!spec(name).with_size(4).needs_size(), "{name}");
    }
}

#[tokio::test]
async fn building_needs_a_size() {
    for name in [
        "pool",
        "round-robin",
        "least-loaded",
        "elastic",
        "take-or-create",
        "partitioned",
    ] {
        let r = Strategy::new(&spec(name), Fake::new(), PoolConfig::default());
        assert_eq!(
            r.err(),
            Some(BuildError::MissingSize(name.to_string())),
            "{name}"
        );
    }
    for name in NAMES.iter().filter(|n| !spec(n).needs_size()) {
        let s = Strategy::new(&spec(name), Fake::new(), PoolConfig::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.spec(), spec(name));
    }
}

#[tokio::test]
async fn every_strategy_checks_out_and_returns() {
    bounded(async {
        for name in NAMES
            .iter()
            .filter(|n| !spec(n).needs_size())
            .chain(&["partitioned:2x2"])
        {
            let fake = Fake::new();
            let pool = strategy(name, &fake, cfg());
            for _ in 0..3 {
                let lease = pool.acquire().await.expect("checkout");
                assert!(lease.id >= 1);
            }
            let m = pool.metrics();
            assert_eq!((m.checkouts, m.in_use), (3, 0), "{name}: {m:?}");
            // Partitioned peaks are sums of the partitions' peaks.
            if !name.starts_with("partitioned") {
                assert_eq!(m.peak_in_use, 1, "{name}: {m:?}");
            }
            assert_eq!(m.opened - m.closed(), m.open, "{name}: {m:?}");
            assert_eq!(fake.live(), m.open as i64, "{name}");
        }
    })
    .await;
}
