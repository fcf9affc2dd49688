//! Cancellation at every await point loses no capacity: while waiting for
//! a connection, while connecting (a gated connect), and while holding a
//! lease (task aborted). Afterwards a full strategy's worth of checkouts
//! succeeds at once and nothing is counted as in use.
//!
//! Current-thread runtime: a spawned task that has started and yielded is
//! parked inside `acquire`.

use crate::common::{bounded, cfg, distinct_ids, strategy, take_all, until_set, Fake};
use poolbench_pool::Strategy;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Bounded strategies and how many leases each can hand out at once.
const BOUNDED: [(&str, usize); 7] = [
    ("pool:3", 3),
    ("elastic:2+1", 3),
    ("elastic:1+0", 1),
    ("partitioned:2x2", 4),
    ("shared", 1),
    ("round-robin:3", 3),
    ("least-loaded:3", 3),
];

/// Spawn a task that checks out a connection, reports its id, and holds it
/// until aborted. Returns once the task is parked or has its lease.
async fn spawn_holder(pool: &Strategy<Fake>, ids: &mpsc::UnboundedSender<u64>) -> JoinHandle<()> {
    let started = Arc::new(AtomicBool::new(false));
    let (pool, ids, flag) = (pool.clone(), ids.clone(), started.clone());
    let task = tokio::spawn(async move {
        flag.store(true, SeqCst);
        let lease = pool.acquire().await.expect("checkout");
        let _ = ids.send(lease.id);
        std::future::pending::<()>().await;
        drop(lease);
    });
    until_set(&started).await;
    task
}

async fn abort_all(tasks: Vec<JoinHandle<()>>) {
    for t in &tasks {
        t.abort();
    }
    for t in tasks {
        let e = t.await.expect_err("aborted tasks never finish");
        assert!(e.is_cancelled(), "task failed instead: {e}");
    }
}

/// Nothing in use, nothing lost: `capacity` checkouts at once, each within
/// a short timeout; open connections match what the connector has live.
async fn assert_full_capacity(spec: &str, fake: &Fake, pool: &Strategy<Fake>, capacity: usize) {
    let m = pool.metrics();
    assert_eq!(m.in_use, 0, "{spec}: in use after cancellation: {m:?}");
    assert_eq!(
        fake.at_gate(),
        0,
        "{spec}: a cancelled connect is still running"
    );
    let held = take_all(pool, capacity).await;
    distinct_ids(&held);
    assert_eq!(pool.metrics().in_use, capacity as u64, "{spec}");
    drop(held);
    let m = pool.metrics();
    assert_eq!(m.in_use, 0, "{spec}: {m:?}");
    assert!(m.open <= capacity as u64, "{spec}: {m:?}");
    assert!(m.peak_open <= capacity as u64, "{spec}: {m:?}");
    assert!(fake.peak_live() <= capacity as i64, "{spec}: too many open");
    assert_eq!(
        fake.live(),
        m.open as i64,
        "{spec}: connector and metrics disagree"
    );
    assert_eq!(m.opened - m.closed(), m.open, "{spec}: {m:?}");
}

#[tokio::test]
async fn cancel_while_waiting_loses_no_capacity() {
    bounded(async {
        for (spec, capacity) in BOUNDED {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, cfg());
            let (ids, mut got) = mpsc::unbounded_channel();
            let mut held = take_all(&pool, capacity).await;
            let mut waiters = Vec::new();
            for _ in 0..2 * capacity + 1 {
                waiters.push(spawn_holder(&pool, &ids).await);
            }
            assert!(got.try_recv().is_err(), "{spec}: a waiter was served");

            // Abort every other waiter while it waits.
            let (cancel, keep): (Vec<_>, Vec<_>) = waiters
                .into_iter()
                .enumerate()
                .partition(|(i, _)| i % 2 == 1);
            abort_all(cancel.into_iter().map(|(_, t)| t).collect()).await;
            assert!(got.try_recv().is_err(), "{spec}: a waiter was served");

            // Return one connection: it is handed to a waiter, which is
            // aborted before it can run.
            drop(held.remove(0));
            abort_all(keep.into_iter().map(|(_, t)| t).collect()).await;
            assert!(
                got.try_recv().is_err(),
                "{spec}: an aborted waiter was served"
            );
            drop(held);

            assert_full_capacity(spec, &fake, &pool, capacity).await;
        }
    })
    .await;
}

#[tokio::test]
async fn cancel_while_connecting_loses_no_capacity() {
    bounded(async {
        for (spec, capacity) in BOUNDED {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, cfg());
            let (ids, mut got) = mpsc::unbounded_channel();
            fake.close_gate();
            let mut tasks = Vec::new();
            for _ in 0..capacity {
                tasks.push(spawn_holder(&pool, &ids).await);
            }
            let want = capacity as u64;
            fake.until("every checkout is connecting", |s| s.at_gate() == want)
                .await;
            // And some behind them, waiting for a connection.
            for _ in 0..capacity {
                tasks.push(spawn_holder(&pool, &ids).await);
            }
            abort_all(tasks).await;
            fake.open_gate();
            assert!(got.try_recv().is_err(), "{spec}: a checkout was served");
            let m = pool.metrics();
            assert_eq!((m.opened, m.checkouts), (0, 0), "{spec}: {m:?}");
            assert_full_capacity(spec, &fake, &pool, capacity).await;
        }
    })
    .await;
}

/// The connections come back broken, the waiters they go to must connect
/// anew, and are aborted while connecting.
#[tokio::test]
async fn cancel_while_replacing_a_broken_connection_loses_no_capacity() {
    bounded(async {
        for (spec, capacity) in BOUNDED {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, cfg());
            let (ids, mut got) = mpsc::unbounded_channel();
            let mut held = take_all(&pool, capacity).await;
            let mut tasks = Vec::new();
            for _ in 0..capacity {
                tasks.push(spawn_holder(&pool, &ids).await);
            }
            fake.close_gate();
            for lease in &mut held {
                lease.mark_broken();
            }
            drop(held);
            let want = capacity as u64;
            fake.until("every waiter is connecting", |s| s.at_gate() == want)
                .await;
            abort_all(tasks).await;
            fake.open_gate();
            assert!(got.try_recv().is_err(), "{spec}: a checkout was served");
            let m = pool.metrics();
            assert_eq!(m.closed_broken, want, "{spec}: {m:?}");
            assert_eq!(m.open, 0, "{spec}: {m:?}");
            assert_full_capacity(spec, &fake, &pool, capacity).await;
        }
    })
    .await;
}

#[tokio::test]
async fn abort_while_holding_returns_the_connection() {
    bounded(async {
        for (spec, capacity) in BOUNDED {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, cfg());
            let (ids, mut got) = mpsc::unbounded_channel();
            let mut holders = Vec::new();
            for _ in 0..capacity {
                holders.push(spawn_holder(&pool, &ids).await);
            }
            let mut first = Vec::new();
            for _ in 0..capacity {
                first.push(got.recv().await.expect("holder served"));
            }
            let mut waiters = Vec::new();
            for _ in 0..capacity {
                waiters.push(spawn_holder(&pool, &ids).await);
            }
            assert!(got.try_recv().is_err(), "{spec}: a waiter was served early");
            assert_eq!(pool.metrics().in_use, capacity as u64, "{spec}");

            // Aborting the holders hands their connections to the waiters.
            abort_all(holders).await;
            let mut second = Vec::new();
            for _ in 0..capacity {
                second.push(got.recv().await.expect("waiter served"));
            }
            first.sort_unstable();
            second.sort_unstable();
            assert_eq!(first, second, "{spec}: the same connections, reused");
            assert_eq!(pool.metrics().in_use, capacity as u64, "{spec}");

            abort_all(waiters).await;
            let m = pool.metrics();
            assert_eq!(m.opened, capacity as u64, "{spec}: {m:?}");
            assert_full_capacity(spec, &fake, &pool, capacity).await;
        }
    })
    .await;
}

/// Unbounded strategies: cancelling a connect leaves nothing open or in use.
#[tokio::test]
async fn cancel_while_connecting_unbounded_strategies() {
    bounded(async {
        for spec in ["per-request", "take-or-create:2"] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, cfg());
            let (ids, _got) = mpsc::unbounded_channel();
            fake.close_gate();
            let mut tasks = Vec::new();
            for _ in 0..3 {
                tasks.push(spawn_holder(&pool, &ids).await);
            }
            fake.until("three connects wait", |s| s.at_gate() == 3)
                .await;
            abort_all(tasks).await;
            fake.open_gate();
            let m = pool.metrics();
            assert_eq!((m.opened, m.open, m.in_use), (0, 0, 0), "{spec}: {m:?}");
            assert_eq!(fake.live(), 0);
            let held = take_all(&pool, 3).await;
            assert_eq!(distinct_ids(&held).len(), 3, "{spec}");
        }
    })
    .await;
}
