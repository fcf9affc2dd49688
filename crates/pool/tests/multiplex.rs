//! Slot strategies over a connector whose connections take several requests
//! at once: leases share a connection up to its stream count, wait FIFO
//! beyond it (counted as checkout waits), and a broken shared connection is
//! replaced once.
use poolbench_pool::{Connector, PoolConfig, PoolSpec, Strategy};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One multiplexed connection: its number and how many leases use it now.
#[derive(Clone)]
struct Mux {
    id: usize,
    users: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    broken: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Clone, Default)]
struct MuxConnector {
    opened: Arc<AtomicUsize>,
    conns: Arc<Mutex<Vec<Mux>>>,
    streams: usize,
}

#[derive(Debug)]
struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

impl Connector for MuxConnector {
    type Conn = Mux;
    type Error = Never;
    async fn connect(&self) -> Result<Mux, Never> {
        let id = self.opened.fetch_add(1, SeqCst) + 1;
        let m = Mux {
            id,
            users: Arc::default(),
            peak: Arc::default(),
            broken: Arc::default(),
        };
        self.conns.lock().unwrap().push(m.clone());
        Ok(m)
    }
    fn is_broken(&self, conn: &mut Mux) -> bool {
        conn.broken.load(SeqCst)
    }
    fn streams(&self, _conn: &Mux) -> usize {
        self.streams
    }
    fn share(&self, conn: &Mux) -> Option<Mux> {
        Some(conn.clone())
    }
}

async fn hold_all(pool: &Strategy<MuxConnector>, tasks: usize, hold: Duration) {
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                let lease = pool.acquire().await.expect("checkout");
                let n = lease.users.fetch_add(1, SeqCst) + 1;
                lease.peak.fetch_max(n, SeqCst);
                tokio::time::sleep(hold).await;
                lease.users.fetch_sub(1, SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.await.expect("task");
    }
}

fn build(spec: &str, streams: usize) -> (Strategy<MuxConnector>, MuxConnector) {
    let c = MuxConnector {
        streams,
        ..Default::default()
    };
    let s = Strategy::new(
        &spec.parse::<PoolSpec>().unwrap(),
        c.clone(),
        PoolConfig::default(),
    )
    .unwrap();
    (s, c)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_multiplexes_up_to_the_stream_count_and_waits_beyond() {
    let (pool, c) = build("shared", 4);
    tokio::time::timeout(
        Duration::from_secs(10),
        hold_all(&pool, 12, Duration::from_millis(30)),
    )
    .await
    .expect("no hang");
    assert_eq!(c.opened.load(SeqCst), 1, "one connection for everything");
    let peak = c.conns.lock().unwrap()[0].peak.load(SeqCst);
    assert_eq!(peak, 4, "four leases at once, never more");
    let m = pool.metrics();
    assert_eq!(m.checkouts, 12);
    assert!(m.waited >= 7, "the 8 beyond the streams wait: {}", m.waited);
    assert_eq!(pool.idle(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_spreads_streams_over_its_connections() {
    let (pool, c) = build("round-robin:3", 100);
    hold_all(&pool, 30, Duration::from_millis(20)).await;
    assert_eq!(c.opened.load(SeqCst), 3);
    for m in c.conns.lock().unwrap().iter() {
        let peak = m.peak.load(SeqCst);
        assert!((2..=10).contains(&peak), "conn {} peak {peak}", m.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_shared_connection_is_replaced_once() {
    let (pool, c) = build("shared", 8);
    {
        let mut a = pool.acquire().await.unwrap();
        let b = pool.acquire().await.unwrap();
        assert_eq!(a.id, b.id, "both on the one connection");
        a.broken.store(true, SeqCst);
        a.mark_broken();
        drop(a);
        drop(b);
    }
    let next: Vec<_> = lease_n(&pool, 5).await;
    assert!(
        next.iter().all(|&id| id == 2),
        "all on the replacement: {next:?}"
    );
    assert_eq!(c.opened.load(SeqCst), 2);
    assert_eq!(pool.metrics().closed_broken, 1);
}

async fn lease_n(pool: &Strategy<MuxConnector>, n: usize) -> Vec<usize> {
    let mut leases = Vec::new();
    for _ in 0..n {
        leases.push(pool.acquire().await.unwrap());
    }
    leases.iter().map(|l| l.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stream_connections_stay_exclusive() {
    let (pool, c) = build("shared", 1);
    hold_all(&pool, 6, Duration::from_millis(5)).await;
    assert_eq!(c.opened.load(SeqCst), 1);
    assert_eq!(c.conns.lock().unwrap()[0].peak.load(SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_that_opened_a_connection_reports_its_connect_time_once() {
    for (spec, streams) in [
        ("shared", 8),
        ("shared", 1),
        ("pool:2", 1),
        ("per-request", 1),
    ] {
        let (pool, _) = build(spec, streams);
        let mut first = pool.acquire().await.unwrap();
        assert!(first.take_connect_time().is_some(), "{spec}: opened here");
        assert!(first.take_connect_time().is_none(), "{spec}: reported once");
        drop(first);
        let mut again = pool.acquire().await.unwrap();
        let fresh = again.take_connect_time().is_some();
        assert_eq!(fresh, spec == "per-request", "{spec}: reused or not");
    }
}
