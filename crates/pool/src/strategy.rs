use crate::error::{AcquireError, BuildError};
use crate::exclusive::{Begin, Exclusive};
use crate::lease::Lease;
use crate::metrics::Metrics;
use crate::slots::{Pick, Slots};
use crate::Connector;
use poolbench_pool_types::PoolConfig;
use poolbench_pool_types::PoolCounters;
use poolbench_pool_types::PoolSpec;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::Duration;

/// Connections from one connector, shared among callers as a
/// [`PoolSpec`] says. Cheap to clone; clones share the connections.
pub struct Strategy<C: Connector> {
    inner: Arc<Inner<C>>,
    spec: PoolSpec,
    checkout_timeout: Duration,
}

enum Inner<C: Connector> {
    /// `pool`, `elastic`, `take-or-create`, `per-request`.
    Exclusive(Arc<Exclusive<C>>),
    /// `shared`, `round-robin`, `least-loaded`.
    Slots(Arc<Slots<C>>),
    /// `partitioned:KxN`: K exclusive pools and a counter for unkeyed use.
    Partitioned(Vec<Arc<Exclusive<C>>>, AtomicUsize),
}

impl<C: Connector> Clone for Strategy<C> {
    fn clone(&self) -> Self {
        Strategy {
            inner: self.inner.clone(),
            spec: self.spec,
            checkout_timeout: self.checkout_timeout,
        }
    }
}

impl<C: Connector + Clone> Strategy<C> {
    /// Build the strategy `spec` names over `connector`. Sized strategies
    /// must carry their size ([`PoolSpec::with_size`]).
    pub fn new(spec: &PoolSpec, connector: C, config: PoolConfig) -> Result<Self, BuildError> {
        if spec.needs_size() {
            return Err(BuildError::MissingSize(spec.kind().to_string()));
        }
        let checkout_timeout = config.checkout_timeout;
        let exclusive = |limit: Option<usize>, max_idle: usize, core: usize| {
            Arc::new(Exclusive::new(
                connector.clone(),
                limit,
                max_idle,
                core,
                config.clone(),
            ))
        };
        let slots = |n: Option<usize>, pick| {
            Inner::Slots(Arc::new(Slots::new(
                connector.clone(),
                n.unwrap_or(1),
                pick,
                config.clone(),
            )))
        };
        let inner = match *spec {
            PoolSpec::PerRequest => Inner::Exclusive(exclusive(None, 0, 0)),
            PoolSpec::Shared => slots(Some(1), Pick::RoundRobin),
            PoolSpec::RoundRobin(n) => slots(n, Pick::RoundRobin),
            PoolSpec::LeastLoaded(n) => slots(n, Pick::LeastLoaded),
            PoolSpec::Pipeline(n, _) => {
                let depth = spec.pipeline_depth().unwrap_or(1);
                let pipelined = connector
                    .pipelined(depth)
                    .ok_or_else(|| BuildError::NoPipelining(spec.to_string()))?;
                Inner::Slots(Arc::new(Slots::new(
                    pipelined,
                    n.unwrap_or(1),
                    Pick::RoundRobin,
                    config.clone(),
                )))
            }
            PoolSpec::Pool(n) => {
                let n = n.unwrap_or(1);
                Inner::Exclusive(exclusive(Some(n), n, n))
            }
            PoolSpec::Elastic(n, m) => {
                let (n, m) = (n.unwrap_or(1), m.unwrap_or(0));
                Inner::Exclusive(exclusive(Some(n + m), n + m, n))
            }
            PoolSpec::TakeOrCreate(n) => {
                let n = n.unwrap_or(1);
                Inner::Exclusive(exclusive(None, n, n))
            }
            PoolSpec::Partitioned(k, n) => {
                let n = n.unwrap_or(1);
                let pools = (0..k.unwrap_or(1))
                    .map(|_| exclusive(Some(n), n, n))
                    .collect();
                Inner::Partitioned(pools, AtomicUsize::new(0))
            }
        };
        let strategy = Strategy {
            inner: Arc::new(inner),
            spec: *spec,
            checkout_timeout,
        };
        strategy.spawn_reapers();
        Ok(strategy)
    }
}

impl<C: Connector> Strategy<C> {
    /// Lease a connection: wait (in arrival order) for one to come free,
    /// or open one, within the checkout timeout.
    pub async fn acquire(&self) -> Result<Lease<C>, AcquireError<C::Error>> {
        match &*self.inner {
            Inner::Exclusive(e) => self.acquire_exclusive(e).await,
            Inner::Slots(s) => self.acquire_slot(s, None).await,
            Inner::Partitioned(pools, next) => {
                let i = next.fetch_add(1, Relaxed) % pools.len();
                self.acquire_exclusive(&pools[i]).await
            }
        }
    }

    /// Like [`acquire`](Self::acquire), with a key that picks the partition
    /// of `partitioned:KxN` (key mod K). Other strategies ignore the key.
    pub async fn acquire_keyed(&self, key: usize) -> Result<Lease<C>, AcquireError<C::Error>> {
        match &*self.inner {
            Inner::Partitioned(pools, _) => self.acquire_exclusive(&pools[key % pools.len()]).await,
            _ => self.acquire().await,
        }
    }

    /// Like [`acquire_keyed`](Self::acquire_keyed), for a caller that keeps
    /// its own turn: `round-robin:N` gives it connection `turn mod N`.
    /// A caller that counts its requests up from its own number spreads
    /// them over the N connections as evenly as the shared counter does,
    /// and callers woken by answers on one connection then send their next
    /// requests on one connection too, which the connection's driver writes
    /// together. Other strategies ignore the turn.
    pub async fn acquire_turn(
        &self,
        key: usize,
        turn: usize,
    ) -> Result<Lease<C>, AcquireError<C::Error>> {
        match &*self.inner {
            Inner::Exclusive(e) => self.acquire_exclusive(e).await,
            Inner::Slots(s) => self.acquire_slot(s, Some(turn)).await,
            Inner::Partitioned(pools, _) => self.acquire_exclusive(&pools[key % pools.len()]).await,
        }
    }

    /// A stream on one of the slots: the `turn` mod N given, or the
    /// strategy's own pick.
    async fn acquire_slot(
        &self,
        s: &Arc<Slots<C>>,
        turn: Option<usize>,
    ) -> Result<Lease<C>, AcquireError<C::Error>> {
        let mut checkout = std::pin::pin!(s.checkout(turn));
        // The fast path: a stream free at once needs no timer.
        let now = std::future::poll_fn(|cx| match checkout.as_mut().poll(cx) {
            Poll::Ready(held) => Poll::Ready(Some(held)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        let held = match now {
            Some(held) => held,
            None => match Box::pin(tokio::time::timeout(self.checkout_timeout, checkout)).await {
                Ok(held) => held,
                Err(_) => return Err(self.timed_out(&s.metrics)),
            },
        };
        Ok(Lease::slot(s.clone(), held?))
    }

    async fn acquire_exclusive(
        &self,
        e: &Arc<Exclusive<C>>,
    ) -> Result<Lease<C>, AcquireError<C::Error>> {
        let begin = match e.begin() {
            // The fast path: no timer.
            Ok(Begin::Ready(Some(conn))) => return Ok(Lease::exclusive(e.clone(), conn)),
            Ok(begin) => begin,
            Err(err) => return Err(err),
        };
        // The wait (and the connect within it) is boxed: a rare state, so
        // the caller's future is not sized for it.
        match Box::pin(tokio::time::timeout(self.checkout_timeout, e.finish(begin))).await {
            Ok(got) => got.map(|(owner, conn)| Lease::exclusive(owner, conn)),
            Err(_) => Err(self.timed_out(&e.metrics)),
        }
    }

    fn timed_out(&self, metrics: &Metrics) -> AcquireError<C::Error> {
        metrics.timeout();
        AcquireError::Timeout(self.checkout_timeout)
    }

    /// Open connections ahead of demand until `min_idle` are idle (pooled
    /// strategies; for `partitioned`, in each partition). Returns how many
    /// were opened.
    pub async fn prefill(&self) -> Result<usize, AcquireError<C::Error>> {
        match &*self.inner {
            Inner::Exclusive(e) => e.prefill().await,
            Inner::Slots(_) => Ok(0),
            Inner::Partitioned(pools, _) => {
                let mut opened = 0;
                for p in pools {
                    opened += p.prefill().await?;
                }
                Ok(opened)
            }
        }
    }

    /// The counters as they are now (for `partitioned`, summed over the
    /// partitions; peaks are then the sum of each partition's peak).
    pub fn metrics(&self) -> PoolCounters {
        match &*self.inner {
            Inner::Exclusive(e) => e.snapshot(),
            Inner::Slots(s) => s.snapshot(),
            Inner::Partitioned(pools, _) => {
                let mut total = PoolCounters::default();
                for p in pools {
                    total.merge(&p.snapshot());
                }
                total
            }
        }
    }

    /// A caller waited `wait` in a line of its own before asking (a load
    /// generator that runs as many loops as connections and keeps its
    /// other workers in a FIFO line): counted as a checkout that waited.
    pub fn waited_in_line(&self, wait: Duration) {
        if let Inner::Exclusive(e) = &*self.inner {
            e.metrics.waited_in_line(wait);
        }
    }

    /// A caller gave up waiting in its own line at the checkout timeout:
    /// counted as a checkout timeout.
    pub fn timed_out_in_line(&self) {
        if let Inner::Exclusive(e) = &*self.inner {
            e.metrics.timeout();
        }
    }

    /// What this strategy is.
    pub fn spec(&self) -> PoolSpec {
        self.spec
    }

    /// How long a checkout waits before it fails with
    /// [`AcquireError::Timeout`] (from its [`PoolConfig`]).
    pub fn checkout_timeout(&self) -> Duration {
        self.checkout_timeout
    }

    /// Connections open and not leased.
    pub fn idle(&self) -> usize {
        match &*self.inner {
            Inner::Exclusive(e) => e.idle_count(),
            Inner::Slots(s) => s.idle_count(),
            Inner::Partitioned(pools, _) => pools.iter().map(|p| p.idle_count()).sum(),
        }
    }

    /// Close every connection not leased now.
    pub fn close_idle(&self) {
        match &*self.inner {
            Inner::Exclusive(e) => e.close_idle(),
            Inner::Slots(s) => s.close_idle(),
            Inner::Partitioned(pools, _) => pools.iter().for_each(|p| p.close_idle()),
        }
    }

    /// Close expired and surplus idle connections in the background while
    /// the strategy lives (when built inside a tokio runtime).
    fn spawn_reapers(&self) {
        match &*self.inner {
            Inner::Exclusive(e) => spawn_reaper(e),
            Inner::Slots(_) => {}
            Inner::Partitioned(pools, _) => pools.iter().for_each(spawn_reaper),
        }
    }
}

fn spawn_reaper<C: Connector>(e: &Arc<Exclusive<C>>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let c = &e.config;
    let shortest_life = c
        .max_lifetime
        .map(|l| l.mul_f64(1.0 - c.lifetime_jitter.clamp(0.0, 1.0)));
    let every = [c.idle_timeout, Some(c.overflow_grace), shortest_life]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(Duration::from_secs(1))
        .clamp(Duration::from_millis(10), Duration::from_secs(1))
        / 2;
    e.clock.set_period(every);
    let weak: Weak<Exclusive<C>> = Arc::downgrade(e);
    handle.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match weak.upgrade() {
                Some(e) => e.reap(),
                None => return,
            }
        }
    });
}
