//! What the pool benchmarks share: a no-op connection for each pool under
//! test (this crate's `pool:N`, deadpool, bb8, qp) behind one small trait,
//! building, pre-warming and a count of connections opened.
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// The pools compared, in the order they are measured at each point.
pub const KINDS: [Kind; 4] = [Kind::Poolbench, Kind::Deadpool, Kind::Bb8, Kind::Qp];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Poolbench,
    Deadpool,
    Bb8,
    Qp,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Poolbench => "poolbench",
            Kind::Deadpool => "deadpool",
            Kind::Bb8 => "bb8",
            Kind::Qp => "qp",
        }
    }
}

/// Connections opened, shared by a pool's connector/manager and the bench.
#[derive(Clone, Default)]
pub struct Opened(Arc<AtomicUsize>);

impl Opened {
    pub fn get(&self) -> usize {
        self.0.load(Relaxed)
    }
    fn bump(&self) -> u64 {
        self.0.fetch_add(1, Relaxed) as u64
    }
}

/// A pool under test: check a connection out, give it back on drop.
pub trait BenchPool: Clone + Send + Sync + 'static {
    type Guard<'a>: Send
    where
        Self: 'a;
    fn get(&self) -> impl Future<Output = Self::Guard<'_>> + Send + '_;
    /// (checkouts, checkouts that waited), where the pool counts them.
    fn waits(&self) -> Option<(u64, u64)> {
        None
    }
}

// ---- poolbench -------------------------------------------------------------

#[derive(Clone)]
pub struct NoopConnector(Opened);

impl poolbench_pool::Connector for NoopConnector {
    type Conn = u64;
    type Error = Infallible;
    async fn connect(&self) -> Result<u64, Infallible> {
        Ok(self.0.bump())
    }
    fn is_broken(&self, _conn: &mut u64) -> bool {
        false
    }
}

#[derive(Clone)]
pub struct Poolbench(pub poolbench_pool::Strategy<NoopConnector>);

impl BenchPool for Poolbench {
    type Guard<'a> = poolbench_pool::Lease<NoopConnector>;
    async fn get(&self) -> Self::Guard<'_> {
        self.0.acquire().await.expect("poolbench checkout")
    }
    fn waits(&self) -> Option<(u64, u64)> {
        let m = self.0.metrics();
        Some((m.checkouts, m.waited))
    }
}

// ---- deadpool (managed) ----------------------------------------------------

pub struct NoopManager(Opened);

impl deadpool::managed::Manager for NoopManager {
    type Type = u64;
    type Error = Infallible;
    async fn create(&self) -> Result<u64, Infallible> {
        Ok(self.0.bump())
    }
    async fn recycle(
        &self,
        _conn: &mut u64,
        _metrics: &deadpool::managed::Metrics,
    ) -> deadpool::managed::RecycleResult<Infallible> {
        Ok(())
    }
}

#[derive(Clone)]
pub struct Deadpool(pub deadpool::managed::Pool<NoopManager>);

impl BenchPool for Deadpool {
    type Guard<'a> = deadpool::managed::Object<NoopManager>;
    async fn get(&self) -> Self::Guard<'_> {
        match self.0.get().await {
            Ok(o) => o,
            Err(e) => panic!("deadpool checkout: {e:?}"),
        }
    }
}

// ---- bb8 --------------------------------------------------------------------

pub struct NoopBb8(Opened);

impl bb8::ManageConnection for NoopBb8 {
    type Connection = u64;
    type Error = Infallible;
    async fn connect(&self) -> Result<u64, Infallible> {
        Ok(self.0.bump())
    }
    async fn is_valid(&self, _conn: &mut u64) -> Result<(), Infallible> {
        Ok(())
    }
    fn has_broken(&self, _conn: &mut u64) -> bool {
        false
    }
}

#[derive(Clone)]
pub struct Bb8(pub bb8::Pool<NoopBb8>);

impl BenchPool for Bb8 {
    type Guard<'a> = bb8::PooledConnection<'a, NoopBb8>;
    async fn get(&self) -> Self::Guard<'_> {
        match self.0.get().await {
            Ok(c) => c,
            Err(e) => panic!("bb8 checkout: {e:?}"),
        }
    }
}

// ---- qp ---------------------------------------------------------------------

pub struct NoopQp(Opened);

#[qp::async_trait]
impl qp::resource::Manage for NoopQp {
    type Output = u64;
    type Error = Infallible;
    async fn try_create(&self) -> Result<u64, Infallible> {
        Ok(self.0.bump())
    }
}

#[derive(Clone)]
pub struct Qp(pub qp::Pool<NoopQp>);

impl BenchPool for Qp {
    type Guard<'a> = qp::Pooled<'a, NoopQp>;
    async fn get(&self) -> Self::Guard<'_> {
        match self.0.acquire().await {
            Ok(c) => c,
            Err(e) => match e {},
        }
    }
}

// ---- building ---------------------------------------------------------------

/// Each pool's wait limit: generous, so that none fires.
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub fn poolbench(size: usize, opened: &Opened) -> Poolbench {
    use poolbench_pool::{PoolConfig, PoolSpec, Strategy};
    // Defaults: a 30 s checkout timeout, which never fires here.
    let spec = PoolSpec::Pool(Some(size));
    Poolbench(
        Strategy::new(&spec, NoopConnector(opened.clone()), PoolConfig::default())
            .expect("pool:N builds"),
    )
}

/// Managed deadpool, default configuration: FIFO queue, no wait timeout
/// (it never fires; setting one would add a timer to every wait).
pub fn deadpool(size: usize, opened: &Opened) -> Deadpool {
    let pool = deadpool::managed::Pool::builder(NoopManager(opened.clone()))
        .max_size(size)
        .build()
        .expect("deadpool builds");
    Deadpool(pool)
}

/// bb8, default configuration (test on checkout, FIFO) with its
/// connection timeout raised from 30 s.
pub async fn bb8(size: usize, opened: &Opened) -> Bb8 {
    let pool = bb8::Pool::builder()
        .max_size(size as u32)
        .connection_timeout(TIMEOUT)
        .build(NoopBb8(opened.clone()))
        .await
        .expect("bb8 builds");
    Bb8(pool)
}

/// qp has no timeouts.
pub fn qp(size: usize, opened: &Opened) -> Qp {
    Qp(qp::Pool::new(NoopQp(opened.clone()), size))
}

/// Open all `size` connections: hold `size` checkouts at once, then give
/// them back. Panics unless exactly `size` connections were opened.
pub async fn warm<P: BenchPool>(pool: &P, size: usize, opened: &Opened) {
    let mut held = Vec::with_capacity(size);
    for _ in 0..size {
        held.push(pool.get().await);
    }
    drop(held);
    assert_eq!(opened.get(), size, "pre-warm opens every connection once");
}

/// Run `f` with the pool of `kind` built (inside the runtime) and warmed.
/// A macro rather than a function: the pools are different types.
#[macro_export]
macro_rules! with_pool {
    ($rt:expr, $kind:expr, $size:expr, |$pool:ident, $opened:ident| $body:expr) => {{
        let $opened = common::Opened::default();
        match $kind {
            common::Kind::Poolbench => {
                let $pool = $rt.block_on(async {
                    let p = common::poolbench($size, &$opened);
                    common::warm(&p, $size, &$opened).await;
                    p
                });
                $body
            }
            common::Kind::Deadpool => {
                let $pool = $rt.block_on(async {
                    let p = common::deadpool($size, &$opened);
                    common::warm(&p, $size, &$opened).await;
                    p
                });
                $body
            }
            common::Kind::Bb8 => {
                let $pool = $rt.block_on(async {
                    let p = common::bb8($size, &$opened).await;
                    common::warm(&p, $size, &$opened).await;
                    p
                });
                $body
            }
            common::Kind::Qp => {
                let $pool = $rt.block_on(async {
                    let p = common::qp($size, &$opened);
                    common::warm(&p, $size, &$opened).await;
                    p
                });
                $body
            }
        }
    }};
}

/// The runtime every measurement runs on: multi-thread, 2 workers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Machine facts for the report header.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {cpu}")
}
