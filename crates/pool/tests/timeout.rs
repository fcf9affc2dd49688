//! Checkout timeouts: they fire on time (real time, within 10 ms of the
//! deadline), are counted, cover connecting too, and are finite by default.

use crate::common::{bounded, cfg, strategy, take_all, Fake};
use poolbench_pool::{AcquireError, PoolConfig, Strategy};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(100);
const SLACK: Duration = Duration::from_millis(10);
const RUNS: u64 = 3;

fn short() -> PoolConfig {
    PoolConfig {
        checkout_timeout: TIMEOUT,
        ..cfg()
    }
}

/// Batches of timed checkouts tried before a late one counts as a failure.
///
/// On a busy 2-core machine (parallel builds, a benchmark running) any
/// thread now and then wakes 10-25 ms late, a bare `tokio::time::timeout`
/// too; the pool adds nothing to that. A strategy that fires late does so in
/// every batch, so a batch is retried: the test fails only if each of
/// `ATTEMPTS` batches had a checkout more than `SLACK` late.
const ATTEMPTS: usize = 5;

/// Time `runs` checkouts that must time out; check each fails with
/// `Timeout(TIMEOUT)`, no earlier than the deadline, and is counted.
/// Returns the longest.
async fn time_out_runs(what: &str, pool: &Strategy<Fake>, runs: u64) -> Duration {
    let before = pool.metrics().timeouts;
    let mut longest = Duration::ZERO;
    for run in 0..runs {
        let started = Instant::now();
        let r = pool.acquire().await;
        let took = started.elapsed();
        match r {
            Err(AcquireError::Timeout(d)) => assert_eq!(d, TIMEOUT, "{what}"),
            Err(e) => panic!("{what}: run {run}: expected a timeout, got {e}"),
            Ok(l) => panic!(
                "{what}: run {run}: expected a timeout, got connection {}",
                l.id
            ),
        }
        assert!(
            took >= TIMEOUT,
            "{what}: run {run} gave up early, after {took:?}"
        );
        longest = longest.max(took);
    }
    assert_eq!(
        pool.metrics().timeouts - before,
        runs,
        "{what}: every timeout is counted"
    );
    longest
}

/// Batches of `runs` timed-out checkouts until the latest of a batch is
/// within `SLACK` of the deadline (see `ATTEMPTS`).
async fn fires_on_time(what: &str, pool: &Strategy<Fake>, runs: u64) {
    let mut late = Vec::new();
    for _ in 0..ATTEMPTS {
        let longest = time_out_runs(what, pool, runs).await;
        if longest <= TIMEOUT + SLACK {
            return;
        }
        late.push(longest - TIMEOUT);
    }
    panic!("{what}: in every batch a checkout timeout fired late, by up to {late:?}");
}

/// Exhaust `spec` from another task (so the timed checkouts are not
/// nested), then time checkouts out.
async fn exhausted(spec: &str, capacity: usize) {
    let fake = Fake::new();
    let pool = strategy(spec, &fake, short());
    let (full_tx, full) = tokio::sync::oneshot::channel::<()>();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let holder = {
        let pool = pool.clone();
        tokio::spawn(async move {
            let held = take_all(&pool, capacity).await;
            let _ = full_tx.send(());
            let _ = released.await;
            drop(held);
        })
    };
    full.await.expect("holder took the whole strategy");
    fires_on_time(spec, &pool, RUNS).await;
    let m = pool.metrics();
    assert_eq!(m.nested_waits, 0, "{spec}: {m:?}");
    assert_eq!(m.in_use, capacity as u64, "{spec}: {m:?}");
    release.send(()).expect("holder alive");
    holder.await.expect("holder task");
    // Timed-out checkouts took nothing with them.
    let again = take_all(&pool, capacity).await;
    assert_eq!(again.len(), capacity);
}

#[tokio::test]
async fn pool_1_times_out_on_time() {
    bounded(exhausted("pool:1", 1)).await;
}

#[tokio::test]
async fn pool_3_times_out_on_time() {
    bounded(exhausted("pool:3", 3)).await;
}

#[tokio::test]
async fn elastic_times_out_on_time_once_overflow_is_out() {
    bounded(exhausted("elastic:1+2", 3)).await;
}

#[tokio::test]
async fn partitioned_times_out_on_time() {
    bounded(exhausted("partitioned:2x1", 2)).await;
}

#[tokio::test]
async fn shared_times_out_on_time() {
    bounded(exhausted("shared", 1)).await;
}

#[tokio::test]
async fn round_robin_times_out_on_time() {
    bounded(exhausted("round-robin:2", 2)).await;
}

#[tokio::test]
async fn least_loaded_times_out_on_time() {
    bounded(exhausted("least-loaded:2", 2)).await;
}

/// The checkout timeout includes connecting: a connect that hangs is cut
/// off at the deadline, for every kind of strategy.
#[tokio::test]
async fn hanging_connect_times_out_on_time() {
    bounded(async {
        for spec in [
            "pool:2",
            "elastic:1+1",
            "take-or-create:2",
            "per-request",
            "partitioned:2x2",
            "shared",
            "round-robin:2",
            "least-loaded:2",
        ] {
            let fake = Fake::new();
            fake.close_gate();
            let pool = strategy(spec, &fake, short());
            fires_on_time(spec, &pool, 2).await;
            let m = pool.metrics();
            assert_eq!((m.opened, m.in_use, m.checkouts), (0, 0, 0), "{spec}");
            assert_eq!(fake.at_gate(), 0, "{spec}: timed-out connects are dropped");
            fake.open_gate();
            let held = take_all(&pool, 2.min(spec_capacity(spec))).await;
            assert!(!held.is_empty());
        }
    })
    .await;
}

fn spec_capacity(spec: &str) -> usize {
    if spec == "shared" {
        1
    } else {
        2
    }
}

/// A connect error is reported as such, at once, not as a timeout.
#[tokio::test]
async fn connect_error_is_not_a_timeout() {
    bounded(async {
        for spec in [
            "pool:1",
            "elastic:1+1",
            "per-request",
            "shared",
            "round-robin:2",
        ] {
            let fake = Fake::new();
            let pool = strategy(spec, &fake, short());
            fake.fail_next(1);
            let started = Instant::now();
            let r = pool.acquire().await;
            assert!(
                matches!(r, Err(AcquireError::Connect(_))),
                "{spec}: expected a connect error, got {:?}",
                r.map(|l| l.id)
            );
            assert!(started.elapsed() < TIMEOUT, "{spec}: reported late");
            let m = pool.metrics();
            assert_eq!(
                (m.connect_errors, m.timeouts, m.in_use),
                (1, 0, 0),
                "{spec}"
            );
            let lease = pool.acquire().await.expect("the next connect succeeds");
            assert_eq!(lease.id, 1, "{spec}");
        }
    })
    .await;
}

#[test]
fn default_checkout_timeout_is_finite() {
    let d = PoolConfig::default().checkout_timeout;
    assert!(d > Duration::ZERO);
    assert!(
        d <= Duration::from_secs(120),
        "default checkout timeout {d:?} is not a sensible finite bound"
    );
}

/// With the default settings an exhausted pool still gives up: the
/// default is the timeout a strategy built from it holds, and the tests
/// above prove a strategy fires the timeout it holds, on time. (Waiting out
/// the default itself would take paused tokio time, whose `test-util`
/// feature would change tokio for the whole test build.)
#[tokio::test]
async fn the_default_checkout_timeout_is_the_one_a_strategy_fires() {
    let default = PoolConfig::default().checkout_timeout;
    for spec in ["pool:1", "shared"] {
        let fake = Fake::new();
        let pool = strategy(spec, &fake, PoolConfig::default());
        assert_eq!(pool.checkout_timeout(), default, "{spec}");
    }
}
