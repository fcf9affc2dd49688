//! Nested checkout: a task that holds a connection and asks for another
//! from an exhausted strategy would wait on itself. With `fail_on_nested`
//! it is refused at once; either way the wait is counted. A different task
//! waiting is not nested.

use crate::common::{bounded, cfg, strategy, until_set, AcqErr, Fake};
use poolbench_pool::{AcquireError, PoolConfig, Strategy};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

const TIMEOUT: Duration = Duration::from_millis(100);

/// Run `body` in a spawned task. Nested checkouts are detected per tokio
/// task; the body of `#[tokio::test]` (like that of `#[tokio::main]`) runs
/// in `block_on`, outside any task.
async fn in_task<F>(body: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    match tokio::spawn(body).await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

fn config(fail_on_nested: bool, checkout_timeout: Duration) -> PoolConfig {
    PoolConfig {
        fail_on_nested,
        checkout_timeout,
        ..cfg()
    }
}

/// Hold `capacity` leases in this task, then ask for one more.
async fn nested_refused(spec: &str, capacity: usize, size: usize) {
    let fake = Fake::new();
    // A long checkout timeout: the refusal must not wait for it.
    let pool = strategy(spec, &fake, config(true, Duration::from_secs(5)));
    let mut held = Vec::new();
    for _ in 0..capacity {
        held.push(pool.acquire().await.expect("checkout"));
    }
    let started = Instant::now();
    let r = pool.acquire().await;
    let took = started.elapsed();
    let e = match r {
        Err(e) => e,
        Ok(l) => panic!("{spec}: nested checkout got connection {}", l.id),
    };
    assert!(e.is_nested(), "{spec}: expected NestedCheckout, got {e}");
    assert!(!e.is_timeout());
    assert!(
        matches!(e, AcquireError::NestedCheckout { size: s } if s == size),
        "{spec}: {e:?} should report size {size}"
    );
    assert!(
        took < Duration::from_secs(1),
        "{spec}: refused only after {took:?}, not at once"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("T×(C−1)+1"),
        "{spec}: message should give the sizing rule: {msg}"
    );
    assert!(msg.contains(&size.to_string()), "{spec}: {msg}");
    let m = pool.metrics();
    assert_eq!(m.nested_waits, 1, "{spec}: {m:?}");
    assert_eq!(m.timeouts, 0, "{spec}: {m:?}");
    assert_eq!(m.in_use, capacity as u64, "{spec}: {m:?}");
    // Once a connection is returned, the same task checks out normally.
    held.pop();
    let again = pool.acquire().await.expect("checkout after return");
    drop(again);
    assert_eq!(pool.metrics().nested_waits, 1, "{spec}");
}

#[tokio::test]
async fn pool_1_refuses_nested_checkout_at_once() {
    bounded(in_task(nested_refused("pool:1", 1, 1))).await;
}

#[tokio::test]
async fn pool_3_refuses_nested_checkout_at_once() {
    bounded(in_task(nested_refused("pool:3", 3, 3))).await;
}

#[tokio::test]
async fn elastic_refuses_nested_checkout_once_overflow_is_out() {
    bounded(in_task(nested_refused("elastic:1+1", 2, 2))).await;
}

#[tokio::test]
async fn shared_refuses_nested_checkout_at_once() {
    bounded(in_task(nested_refused("shared", 1, 1))).await;
}

/// Holding one of two round-robin slots is not nested while the next
/// request goes to the free slot; it is once the next request would wait
/// on the slot this task holds.
#[tokio::test]
async fn round_robin_refuses_only_when_it_would_wait() {
    bounded(in_task(async {
        let fake = Fake::new();
        let pool = strategy("round-robin:2", &fake, config(true, Duration::from_secs(5)));
        let a = pool.acquire().await.expect("slot 0");
        let b = pool
            .acquire()
            .await
            .expect("slot 1 is free: no wait, not nested");
        assert_ne!(a.id, b.id);
        assert_eq!(pool.metrics().nested_waits, 0);
        let e = pool
            .acquire()
            .await
            .map(|l| l.id)
            .expect_err("slot 0 is mine");
        assert!(
            matches!(e, AcquireError::NestedCheckout { size: 2 }),
            "{e:?}"
        );
        assert_eq!(pool.metrics().nested_waits, 1);
    }))
    .await;
}

/// Without `fail_on_nested` the nested checkout waits, is counted, and
/// times out.
async fn nested_counted(spec: &str) {
    let fake = Fake::new();
    let pool = strategy(spec, &fake, config(false, TIMEOUT));
    let held = pool.acquire().await.expect("checkout");
    let started = Instant::now();
    let r = pool.acquire().await;
    let took = started.elapsed();
    match r {
        Err(AcquireError::Timeout(_)) => {}
        Err(e) => panic!("{spec}: expected a timeout, got {e}"),
        Ok(l) => panic!("{spec}: nested checkout got connection {}", l.id),
    }
    assert!(took >= TIMEOUT, "{spec}: waited only {took:?}");
    let m = pool.metrics();
    assert_eq!(m.nested_waits, 1, "{spec}: {m:?}");
    assert_eq!(m.timeouts, 1, "{spec}: {m:?}");
    drop(held);
}

#[tokio::test]
async fn pool_counts_nested_wait_without_failing() {
    bounded(in_task(nested_counted("pool:1"))).await;
}

#[tokio::test]
async fn shared_counts_nested_wait_without_failing() {
    bounded(in_task(nested_counted("shared"))).await;
}

#[tokio::test]
async fn no_wait_is_not_nested() {
    bounded(in_task(async {
        for spec in ["pool:2", "elastic:1+1", "take-or-create:1", "per-request"] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, config(true, TIMEOUT));
            let a = pool.acquire().await.expect("first");
            let b = pool.acquire().await.expect("second does not wait");
            assert_ne!(a.id, b.id, "{spec}");
            assert_eq!(pool.metrics().nested_waits, 0, "{spec}");
        }
    }))
    .await;
}

/// A task body that, once told to go, checks out a connection, says so,
/// and holds it until released. Returns (go, held, release, body).
fn holder_task(
    pool: &Strategy<Fake>,
) -> (
    oneshot::Sender<()>,
    oneshot::Receiver<()>,
    oneshot::Sender<()>,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (go, go_rx) = oneshot::channel::<()>();
    let (held_tx, held) = oneshot::channel::<()>();
    let (release, release_rx) = oneshot::channel::<()>();
    let pool = pool.clone();
    let task = async move {
        if go_rx.await.is_err() {
            return;
        }
        let lease = pool.acquire().await.expect("holder checkout");
        let _ = held_tx.send(());
        let _ = release_rx.await;
        drop(lease);
    };
    (go, held, release, task)
}

/// A task body that, once told to go, checks out a connection and returns
/// its id. Returns (go, body).
fn waiter_task(
    pool: &Strategy<Fake>,
) -> (
    oneshot::Sender<()>,
    impl std::future::Future<Output = Option<Result<u64, AcqErr>>> + Send + 'static,
) {
    let (go, go_rx) = oneshot::channel::<()>();
    let pool = pool.clone();
    let task = async move {
        go_rx.await.ok()?;
        Some(pool.acquire().await.map(|l| l.id))
    };
    (go, task)
}

fn task_number(id: tokio::task::Id) -> u64 {
    id.to_string().parse().expect("task ids print as numbers")
}

/// One task holds, a different one waits: not nested, even with
/// `fail_on_nested` — the waiter times out instead.
async fn other_task_waits(spec: &str, adjacent_ids: bool) {
    let fake = Fake::new();
    let pool = strategy(spec, &fake, config(true, TIMEOUT));
    // Retry until the two tasks have ids 2k and 2k+1 (with `adjacent_ids`)
    // or ids in different such pairs (without). Tokio numbers tasks in
    // spawn order, process-wide.
    let mut tries = 0;
    let (holder, waiter, go_h, held, release, go_w) = loop {
        tries += 1;
        assert!(tries < 1000, "could not get two tasks with the ids wanted");
        let (go_h, held, release, h) = holder_task(&pool);
        let (go_w, w) = waiter_task(&pool);
        let holder = tokio::spawn(h);
        let waiter = tokio::spawn(w);
        let (a, b) = (task_number(holder.id()), task_number(waiter.id()));
        if (a / 2 == b / 2) == adjacent_ids {
            break (holder, waiter, go_h, held, release, go_w);
        }
        // Dropping the go senders ends both tasks; one more task shifts
        // the parity of the next ids.
        tokio::spawn(async {});
    };
    go_h.send(()).expect("holder alive");
    held.await.expect("holder has the connection");
    go_w.send(()).expect("waiter alive");
    let r = waiter
        .await
        .expect("waiter task")
        .expect("the waiter was told to go");
    match r {
        Err(AcquireError::Timeout(_)) => {}
        Err(e) => panic!("{spec}: a different task waiting got {e} (tries: {tries})"),
        Ok(id) => panic!("{spec}: the waiter got connection {id} while it was held"),
    }
    let m = pool.metrics();
    assert_eq!(m.nested_waits, 0, "{spec}: {m:?}");
    assert_eq!(m.timeouts, 1, "{spec}: {m:?}");
    release.send(()).expect("holder alive");
    holder.await.expect("holder task");
}

#[tokio::test]
async fn pool_other_task_waiting_is_not_nested() {
    bounded(other_task_waits("pool:1", false)).await;
}

#[tokio::test]
async fn shared_other_task_waiting_is_not_nested() {
    bounded(other_task_waits("shared", false)).await;
}

/// Tasks with ids 2k and 2k+1 are different tasks too.
#[tokio::test]
async fn pool_other_task_with_adjacent_id_is_not_nested() {
    bounded(other_task_waits("pool:1", true)).await;
}

#[tokio::test]
async fn shared_other_task_with_adjacent_id_is_not_nested() {
    bounded(other_task_waits("shared", true)).await;
}

/// Several other tasks waiting at once: none is nested, and each is served
/// in turn as the holder returns the connection. (The holder gets an odd
/// task id, so no later task can share its pair of ids; that case is
/// tested above.)
#[tokio::test]
async fn many_other_tasks_waiting_are_not_nested() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("pool:1", &fake, config(true, Duration::from_secs(5)));
        let (holder, go_h, held, release) = loop {
            let (go_h, held, release, h) = holder_task(&pool);
            let holder = tokio::spawn(h);
            if task_number(holder.id()) % 2 == 1 {
                break (holder, go_h, held, release);
            }
        };
        go_h.send(()).expect("holder alive");
        held.await.expect("holder has the connection");
        let mut waiters = Vec::new();
        for _ in 0..8 {
            let started = Arc::new(AtomicBool::new(false));
            let (pool, flag) = (pool.clone(), started.clone());
            waiters.push(tokio::spawn(async move {
                flag.store(true, SeqCst);
                pool.acquire().await.map(|l| l.id)
            }));
            until_set(&started).await;
        }
        release.send(()).expect("holder alive");
        holder.await.expect("holder");
        for (i, w) in waiters.into_iter().enumerate() {
            if let Err(e) = w.await.expect("waiter task") {
                panic!("waiter {i} failed: {e}");
            }
        }
        let m = pool.metrics();
        assert_eq!(m.nested_waits, 0, "{m:?}");
        assert_eq!(m.checkouts, 9, "{m:?}");
        assert_eq!(m.waited, 8, "{m:?}");
    })
    .await;
}
