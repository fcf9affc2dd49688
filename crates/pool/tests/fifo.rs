//! Fair FIFO checkout: once a strategy is exhausted, checkouts are served in
//! the order they arrived, and a newcomer never takes a connection ahead of
//! those already waiting for it.
//!
//! Every test runs on a current-thread runtime, so "parked" is exact: a task
//! that has started and yielded is inside `acquire`, queued.

use crate::common::{bounded, cfg, poll_once, strategy, until_set, Fake};
use poolbench_pool::{Lease, Strategy};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How a strategy queues the checkouts that wait.
#[derive(Clone, Copy, Debug)]
enum Queues {
    /// One queue for the whole strategy (`pool`, `elastic`).
    One,
    /// One queue per slot; the i-th call to `acquire` waits at slot i mod N
    /// (`shared` has one slot, `round-robin:N` has N).
    Slots(usize),
}

type Served = (usize, Lease<Fake>);

/// Tasks that each call `acquire` once and hand their lease to the test,
/// which decides when it is returned.
struct Bench {
    spec: String,
    pool: Strategy<Fake>,
    queues: Queues,
    /// Calls to `acquire` so far, the round-robin cursor.
    calls: usize,
    tx: mpsc::UnboundedSender<Served>,
    rx: mpsc::UnboundedReceiver<Served>,
    /// Who waits where, in arrival order.
    waiting: Vec<VecDeque<usize>>,
    /// For slot strategies: the slot each connection lives in.
    slot_of_conn: HashMap<u64, usize>,
    tasks: Vec<JoinHandle<()>>,
}

impl Bench {
    fn new(spec: &str, pool: Strategy<Fake>, queues: Queues) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let n = match queues {
            Queues::One => 1,
            Queues::Slots(n) => n,
        };
        Bench {
            spec: spec.to_string(),
            pool,
            queues,
            calls: 0,
            tx,
            rx,
            waiting: vec![VecDeque::new(); n],
            slot_of_conn: HashMap::new(),
            tasks: Vec::new(),
        }
    }

    /// The queue the next call to `acquire` waits in, if it waits.
    fn queue_of_next_call(&mut self) -> usize {
        let q = match self.queues {
            Queues::One => 0,
            Queues::Slots(n) => self.calls % n,
        };
        self.calls += 1;
        q
    }

    fn queue_of_lease(&self, lease: &Lease<Fake>) -> usize {
        match self.queues {
            Queues::One => 0,
            Queues::Slots(_) => self.slot_of_conn[&lease.id],
        }
    }

    /// Spawn a task that calls `acquire` and sends its lease back; return
    /// once it has been served or is parked. Returns its queue.
    async fn arrive(&mut self, label: usize) -> usize {
        let q = self.queue_of_next_call();
        let started = Arc::new(AtomicBool::new(false));
        let (pool, tx, flag) = (self.pool.clone(), self.tx.clone(), started.clone());
        self.tasks.push(tokio::spawn(async move {
            flag.store(true, SeqCst);
            let lease = pool
                .acquire()
                .await
                .unwrap_or_else(|e| panic!("checkout {label} failed: {e}"));
            let _ = tx.send((label, lease));
        }));
        until_set(&started).await;
        q
    }

    async fn served(&mut self) -> Served {
        tokio::time::timeout(Duration::from_secs(5), self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("{}: nobody was served", self.spec))
            .expect("the channel stays open")
    }

    fn assert_none_served(&mut self) {
        if let Ok((label, lease)) = self.rx.try_recv() {
            panic!(
                "{}: checkout {label} was served (connection {}) while the strategy was exhausted",
                self.spec, lease.id
            );
        }
    }
}

/// Exhaust `spec` (which holds `capacity` leases at most), queue waiters one
/// at a time, then return leases one at a time. After each return, a
/// newcomer tries to check out at once (it must not get the connection
/// just returned) and another newcomer queues; the returned connection must
/// go to the oldest waiter in its queue.
async fn fifo(spec: &str, queues: Queues, capacity: usize) {
    let fake = Fake::new();
    let pool = strategy(spec, &fake, cfg());
    let mut b = Bench::new(spec, pool.clone(), queues);

    let mut held = VecDeque::new();
    for label in 0..capacity {
        let q = b.arrive(label).await;
        let (got, lease) = b.served().await;
        assert_eq!(got, label, "{spec}: checkout {label} should not wait");
        if let Queues::Slots(_) = queues {
            b.slot_of_conn.insert(lease.id, q);
        }
        held.push_back(lease);
    }
    assert_eq!(pool.metrics().waited, 0, "{spec}: nobody waited yet");

    let mut next = capacity;
    for _ in 0..2 * capacity + 1 {
        let q = b.arrive(next).await;
        b.assert_none_served();
        b.waiting[q].push_back(next);
        next += 1;
    }

    let mut latecomers = capacity + 1;
    let mut served_after_wait = 0u64;
    while let Some(pos) = held
        .iter()
        .position(|l| !b.waiting[b.queue_of_lease(l)].is_empty())
    {
        let lease = held.remove(pos).expect("position is in range");
        let q = b.queue_of_lease(&lease);
        let returned = lease.id;
        drop(lease);

        // A newcomer calling acquire right now, before anyone else runs.
        b.queue_of_next_call();
        if let Some(r) = poll_once(pool.acquire()).await {
            let got = r.map(|l| l.id);
            panic!("{spec}: a newcomer jumped the queue and got {got:?}");
        }
        // A newcomer that queues now goes behind everyone waiting.
        if latecomers > 0 {
            latecomers -= 1;
            let lq = b.arrive(next).await;
            b.waiting[lq].push_back(next);
            next += 1;
        }

        let (label, lease) = b.served().await;
        let expected = b.waiting[q].pop_front().expect("someone waits here");
        assert_eq!(
            label, expected,
            "{spec}: connection {returned} should go to the oldest waiter of queue {q}"
        );
        assert_eq!(
            lease.id, returned,
            "{spec}: the waiter should get the connection just returned"
        );
        served_after_wait += 1;
        held.push_back(lease);
    }
    assert!(
        b.waiting.iter().all(VecDeque::is_empty),
        "{spec}: waiters left over: {:?}",
        b.waiting
    );
    b.assert_none_served();

    let m = pool.metrics();
    assert_eq!(m.checkouts, next as u64, "{spec}: {m:?}");
    assert_eq!(m.waited, served_after_wait, "{spec}: {m:?}");
    assert_eq!(m.waits.count(), served_after_wait, "{spec}: {m:?}");
    assert_eq!(m.timeouts, 0, "{spec}: {m:?}");
    assert!(m.peak_open <= capacity as u64, "{spec}: {m:?}");
    assert!(fake.peak_live() <= capacity as i64, "{spec}: too many open");
    assert_eq!(m.in_use, capacity as u64, "{spec}: {m:?}");

    drop(held);
    for t in b.tasks.drain(..) {
        t.await.expect("waiter task");
    }
    assert_eq!(pool.metrics().in_use, 0);
}

#[tokio::test]
async fn pool_1_serves_waiters_in_arrival_order() {
    bounded(fifo("pool:1", Queues::One, 1)).await;
}

#[tokio::test]
async fn pool_3_serves_waiters_in_arrival_order() {
    bounded(fifo("pool:3", Queues::One, 3)).await;
}

#[tokio::test]
async fn elastic_serves_waiters_in_arrival_order_once_core_and_overflow_are_out() {
    bounded(fifo("elastic:2+2", Queues::One, 4)).await;
}

#[tokio::test]
async fn elastic_without_overflow_serves_waiters_in_arrival_order() {
    bounded(fifo("elastic:2+0", Queues::One, 2)).await;
}

#[tokio::test]
async fn partitioned_single_partition_serves_waiters_in_arrival_order() {
    bounded(fifo("partitioned:1x2", Queues::One, 2)).await;
}

#[tokio::test]
async fn shared_serves_waiters_in_arrival_order() {
    bounded(fifo("shared", Queues::Slots(1), 1)).await;
}

#[tokio::test]
async fn round_robin_serves_each_slot_in_arrival_order() {
    bounded(fifo("round-robin:3", Queues::Slots(3), 3)).await;
}

/// A connection that came back broken is replaced for the oldest waiter,
/// not for a newcomer.
#[tokio::test]
async fn broken_return_still_serves_the_oldest_waiter() {
    bounded(async {
        let fake = Fake::new();
        let pool = strategy("pool:1", &fake, cfg());
        let mut b = Bench::new("pool:1", pool.clone(), Queues::One);
        b.arrive(0).await;
        let (_, mut lease) = b.served().await;
        for label in 1..=3 {
            b.arrive(label).await;
        }
        b.assert_none_served();
        lease.mark_broken();
        drop(lease);
        assert!(
            poll_once(pool.acquire()).await.is_none(),
            "a newcomer jumped the queue"
        );
        for expected in 1..=3 {
            let (label, lease) = b.served().await;
            assert_eq!(label, expected);
            assert_eq!(lease.id, 2, "one replacement connection, reused");
            drop(lease);
        }
        assert_eq!(pool.metrics().closed_broken, 1);
        assert_eq!(pool.metrics().opened, 2);
    })
    .await;
}
