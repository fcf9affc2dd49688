//! A fake connector for the pool tests, and helpers shared by them.
//!
//! Connections are numbered from 1 in the order they are opened. The
//! connector can fail the next k connects (or a random fraction of them,
//! seeded), hold connects at a gate until released, report chosen ids as
//! broken, and counts live connections (decremented in the connection's
//! `Drop`) with their peak. `State::use_conn` records who uses a connection,
//! to catch one connection leased to two holders at once.
#![allow(dead_code)]

use poolbench_pool::{AcquireError, Connector, Lease, PoolConfig, PoolSpec, Strategy};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

/// Upper bound for any one test body.
pub const TEST_LIMIT: Duration = Duration::from_secs(20);
/// Upper bound for one wait on a condition inside a test.
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);
/// How long the close of a connection chosen with `State::hold_close` takes
/// at most (it ends early when another connection opens meanwhile).
pub const CLOSE_HOLD: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectFailed;

impl fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("injected connect failure")
    }
}

impl std::error::Error for ConnectFailed {}

pub type AcqErr = AcquireError<ConnectFailed>;

/// The fake connector. Clones share one [`State`].
#[derive(Clone, Default)]
pub struct Fake {
    pub s: Arc<State>,
}

#[derive(Default)]
pub struct State {
    next_id: AtomicU64,
    /// Fail this many of the next connects.
    fail_next: AtomicU64,
    /// Fail connects at random, this many per thousand (with `rng`).
    fail_per_mille: AtomicU64,
    /// Yield (and sometimes sleep 1 ms) a random number of times inside
    /// connect, so that cancellation can hit a connect in progress.
    slow_connects: AtomicBool,
    rng: Mutex<Option<StdRng>>,
    /// While set, connects wait for a permit here.
    gate: Mutex<Option<Arc<Semaphore>>>,
    /// Connects waiting at the gate now.
    at_gate: AtomicU64,
    broken: Mutex<HashSet<u64>>,
    live: AtomicI64,
    peak_live: AtomicI64,
    attempts: AtomicU64,
    failed: AtomicU64,
    opened: AtomicU64,
    dropped: AtomicU64,
    drops: Mutex<Vec<(u64, Instant)>>,
    users: Mutex<HashMap<u64, u64>>,
    next_user: AtomicU64,
    double_leases: AtomicU64,
    /// Connections whose close (drop) is held, and how many are closing.
    hold_close: Mutex<HashSet<u64>>,
    closing: AtomicU64,
    /// Signalled (under `opened_lock`) whenever a connection opens.
    opened_lock: Mutex<()>,
    opened_cv: Condvar,
    /// Notified on every connect event and connection drop.
    changed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An open fake connection.
pub struct Conn {
    pub id: u64,
    pub opened_at: Instant,
    state: Arc<State>,
}

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Conn#{}", self.id)
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let s = &self.state;
        if lock(&s.hold_close).remove(&self.id) {
            // A slow close: still open (and counted live) until another
            // connection opens or CLOSE_HOLD passes.
            let before = s.opened.load(SeqCst);
            s.closing.fetch_add(1, SeqCst);
            s.changed.notify_waiters();
            let g = lock(&s.opened_lock);
            let _ = s
                .opened_cv
                .wait_timeout_while(g, CLOSE_HOLD, |_| s.opened.load(SeqCst) == before);
            s.closing.fetch_sub(1, SeqCst);
        }
        s.live.fetch_sub(1, SeqCst);
        s.dropped.fetch_add(1, SeqCst);
        lock(&s.drops).push((self.id, Instant::now()));
        s.changed.notify_waiters();
    }
}

/// Counts a connect waiting at the gate; uncounts on drop (also when the
/// connect is cancelled).
struct AtGate<'a>(&'a State);

impl<'a> AtGate<'a> {
    fn new(s: &'a State) -> Self {
        s.at_gate.fetch_add(1, SeqCst);
        s.changed.notify_waiters();
        AtGate(s)
    }
}

impl Drop for AtGate<'_> {
    fn drop(&mut self) {
        self.0.at_gate.fetch_sub(1, SeqCst);
        self.0.changed.notify_waiters();
    }
}

impl Connector for Fake {
    type Conn = Conn;
    type Error = ConnectFailed;

    async fn connect(&self) -> Result<Conn, ConnectFailed> {
        let s = &self.s;
        s.attempts.fetch_add(1, SeqCst);
        let gate = lock(&s.gate).clone();
        if let Some(gate) = gate {
            let _at = AtGate::new(s);
            gate.acquire()
                .await
                .expect("the gate is never closed")
                .forget();
        }
        if s.slow_connects.load(SeqCst) {
            let (yields, nap) = s.with_rng(|r| (r.random_range(0..4), r.random_bool(0.1)));
            for _ in 0..yields {
                tokio::task::yield_now().await;
            }
            if nap {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let fail_now = s
            .fail_next
            .fetch_update(SeqCst, SeqCst, |k| k.checked_sub(1))
            .is_ok();
        let per_mille = s.fail_per_mille.load(SeqCst);
        let fail_random = per_mille > 0 && s.with_rng(|r| r.random_range(0..1000) < per_mille);
        if fail_now || fail_random {
            s.failed.fetch_add(1, SeqCst);
            s.changed.notify_waiters();
            return Err(ConnectFailed);
        }
        let id = s.next_id.fetch_add(1, SeqCst) + 1;
        let live = s.live.fetch_add(1, SeqCst) + 1;
        s.peak_live.fetch_max(live, SeqCst);
        s.opened.fetch_add(1, SeqCst);
        drop(lock(&s.opened_lock));
        s.opened_cv.notify_all();
        s.changed.notify_waiters();
        Ok(Conn {
            id,
            opened_at: Instant::now(),
            state: s.clone(),
        })
    }

    fn is_broken(&self, conn: &mut Conn) -> bool {
        lock(&self.s.broken).contains(&conn.id)
    }
}

impl Fake {
    pub fn new() -> Self {
        Fake::default()
    }
}

impl std::ops::Deref for Fake {
    type Target = State;
    fn deref(&self) -> &State {
        &self.s
    }
}

impl State {
    fn with_rng<T>(&self, f: impl FnOnce(&mut StdRng) -> T) -> T {
        let mut g = lock(&self.rng);
        f(g.get_or_insert_with(|| StdRng::seed_from_u64(0)))
    }

    /// Fail the next `k` connects.
    pub fn fail_next(&self, k: u64) {
        self.fail_next.store(k, SeqCst);
    }

    /// Fail connects at random, `per_mille` in a thousand, seeded.
    pub fn fail_randomly(&self, seed: u64, per_mille: u64) {
        *lock(&self.rng) = Some(StdRng::seed_from_u64(seed));
        self.fail_per_mille.store(per_mille, SeqCst);
    }

    pub fn slow_connects(&self, on: bool) {
        self.slow_connects.store(on, SeqCst);
    }

    /// Hold every connect from now on at a gate.
    pub fn close_gate(&self) {
        *lock(&self.gate) = Some(Arc::new(Semaphore::new(0)));
    }

    /// Let `k` connects through the gate.
    pub fn let_through(&self, k: usize) {
        if let Some(g) = lock(&self.gate).as_ref() {
            g.add_permits(k);
        }
    }

    /// Remove the gate, letting every waiting connect through.
    pub fn open_gate(&self) {
        if let Some(g) = lock(&self.gate).take() {
            g.add_permits(1 << 20);
        }
    }

    pub fn at_gate(&self) -> u64 {
        self.at_gate.load(SeqCst)
    }

    /// Report connection `id` as broken from now on.
    pub fn break_conn(&self, id: u64) {
        lock(&self.broken).insert(id);
    }

    /// Make the close of connection `id` slow: its drop waits until another
    /// connection opens (or `CLOSE_HOLD` passes), so a strategy that lets a
    /// replacement open before the close is over is caught with both open.
    pub fn hold_close(&self, id: u64) {
        lock(&self.hold_close).insert(id);
    }

    /// Connections being closed (held) now.
    pub fn closing(&self) -> u64 {
        self.closing.load(SeqCst)
    }

    pub fn is_reported_broken(&self, id: u64) -> bool {
        lock(&self.broken).contains(&id)
    }

    pub fn live(&self) -> i64 {
        self.live.load(SeqCst)
    }

    pub fn peak_live(&self) -> i64 {
        self.peak_live.load(SeqCst)
    }

    pub fn attempts(&self) -> u64 {
        self.attempts.load(SeqCst)
    }

    /// Connects that failed (injected failures).
    pub fn failed(&self) -> u64 {
        self.failed.load(SeqCst)
    }

    pub fn opened(&self) -> u64 {
        self.opened.load(SeqCst)
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(SeqCst)
    }

    /// When each connection was dropped, in order.
    pub fn drops(&self) -> Vec<(u64, Instant)> {
        lock(&self.drops).clone()
    }

    pub fn double_leases(&self) -> u64 {
        self.double_leases.load(SeqCst)
    }

    /// Record that a new holder uses connection `id` until the guard drops.
    /// Counts a double lease if another holder uses it now.
    pub fn use_conn(self: &Arc<Self>, id: u64) -> InUse {
        let user = self.next_user.fetch_add(1, SeqCst) + 1;
        if let Some(other) = lock(&self.users).insert(id, user) {
            self.double_leases.fetch_add(1, SeqCst);
            eprintln!("connection {id} leased to holders {other} and {user} at once");
        }
        InUse {
            state: self.clone(),
            id,
            user,
        }
    }

    /// Wait until `cond` holds: checked on every connector event, and every
    /// 2 ms besides, for conditions that also read the strategy's counters
    /// (a strategy counts a close just after the connection is dropped).
    pub async fn until(&self, what: &str, cond: impl Fn(&State) -> bool) {
        let wait = async {
            loop {
                let mut changed = pin!(self.changed.notified());
                changed.as_mut().enable();
                if cond(self) {
                    return;
                }
                let _ = tokio::time::timeout(Duration::from_millis(2), changed).await;
            }
        };
        if tokio::time::timeout(WAIT_LIMIT, wait).await.is_err() {
            panic!("timed out waiting until {what}");
        }
    }
}

pub struct InUse {
    state: Arc<State>,
    id: u64,
    user: u64,
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut users = lock(&self.state.users);
        if users.get(&self.id) == Some(&self.user) {
            users.remove(&self.id);
        }
    }
}

/// Settings for tests: a checkout timeout that is short enough to bound a
/// test but long enough never to fire by accident; the rest as default.
pub fn cfg() -> PoolConfig {
    PoolConfig {
        checkout_timeout: Duration::from_secs(5),
        ..PoolConfig::default()
    }
}

pub fn spec(s: &str) -> PoolSpec {
    s.parse()
        .unwrap_or_else(|e| panic!("spec {s:?} should parse: {e}"))
}

pub fn strategy(s: &str, fake: &Fake, config: PoolConfig) -> Strategy<Fake> {
    Strategy::new(&spec(s), fake.clone(), config)
        .unwrap_or_else(|e| panic!("strategy {s:?} should build: {e}"))
}

/// Run a test body with an upper bound on its duration.
pub async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(TEST_LIMIT, body)
        .await
        .expect("test body exceeded its time limit")
}

/// A current-thread runtime for tests that build their strategy outside a
/// runtime (so that no background reaper runs).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Poll `fut` exactly once, with no chance for other tasks to run in
/// between, then drop it. `None` if it was not ready.
pub async fn poll_once<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(v) => Poll::Ready(Some(v)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

/// Yield until `flag` is set. On a current-thread runtime, a task that sets
/// the flag and then awaits `acquire` in the same poll has, once this
/// returns, either got its lease or parked inside `acquire`.
pub async fn until_set(flag: &AtomicBool) {
    for _ in 0..10_000 {
        if flag.load(SeqCst) {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("spawned task never started");
}

/// Acquire `n` leases at once, each within a short timeout that must not
/// fire: proof that no capacity was lost. Returns them (all held).
pub async fn take_all(pool: &Strategy<Fake>, n: usize) -> Vec<Lease<Fake>> {
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        match tokio::time::timeout(Duration::from_millis(500), pool.acquire()).await {
            Ok(Ok(lease)) => held.push(lease),
            Ok(Err(e)) => panic!("checkout {i} of {n} failed: {e}"),
            Err(_) => panic!(
                "checkout {i} of {n} had to wait: capacity was lost ({:?})",
                pool.metrics()
            ),
        }
    }
    held
}

/// Ids of the connections behind some leases, sorted, checked distinct.
pub fn distinct_ids(leases: &[Lease<Fake>]) -> Vec<u64> {
    let mut ids: Vec<u64> = leases.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "one connection leased twice: {ids:?}");
    ids
}
