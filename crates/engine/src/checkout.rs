//! Where a cell's requests get their connections: this project's
//! [`Strategy`], or a pool library run as a baseline (`deadpool:N`,
//! `bb8:N`). The libraries run their generic pools over the same
//! `Connector` as ours, so every strategy does identical work per request
//! and only the pool logic differs. A protocol client's own pool
//! (`mysql-async:N`) comes from the target (`Target::client_pool`) and
//! hands out that client's connections, checked out here as the others.
use crate::record::Fault;
use poolbench_model::{Library, RunBy, StrategySpec};
use poolbench_pool::{AcquireError, BuildError, Lease, PoolConfig, PoolCounters, Strategy};
use poolbench_targets::library::ClientPool;
use poolbench_targets::{ErrorKind, RequestError, Target};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl From<AcquireError<RequestError>> for Fault {
    fn from(e: AcquireError<RequestError>) -> Self {
        match e {
            AcquireError::Timeout(_) => ErrorKind::CheckoutTimeout.into(),
            AcquireError::NestedCheckout { .. } => ErrorKind::NestedCheckout.into(),
            AcquireError::Connect(e) => Fault::from(e),
        }
    }
}

/// Why a cell's strategy could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StrategyError {
    /// The pool refused it.
    #[error(transparent)]
    Pool(#[from] BuildError),
    /// A library baseline without a size.
    #[error("strategy \"{0}\" needs a size, e.g. {0}:16")]
    MissingSize(String),
    /// A library baseline its library (or this target) cannot build.
    #[error("strategy \"{0}\": {1}")]
    Library(String, String),
}

/// A cell's source of connections.
pub(crate) enum Checkout<T: Target> {
    Ours(Strategy<T>),
    Deadpool(deadpool::managed::Pool<Adapter<T>>, Arc<LibraryCounters>),
    Bb8(bb8::Pool<Adapter<T>>, Arc<LibraryCounters>),
    /// A protocol client's pool, its checkout timeout, our counters.
    Client(Arc<dyn ClientPool<T::Conn>>, Duration, Arc<LibraryCounters>),
}

impl<T: Target + Clone> Checkout<T> {
    pub(crate) fn new(
        spec: &StrategySpec,
        target: T,
        config: PoolConfig,
    ) -> Result<Self, StrategyError> {
        let counters = Arc::new(LibraryCounters::default());
        let adapter = Adapter {
            target,
            counters: counters.clone(),
        };
        let missing = || StrategyError::MissingSize(spec.kind().to_string());
        match spec.run_by() {
            RunBy::Pool(ours) => Ok(Checkout::Ours(Strategy::new(
                &ours,
                adapter.target,
                config,
            )?)),
            RunBy::Library(Library::Deadpool, n) => {
                let pool = deadpool::managed::Pool::builder(adapter)
                    .max_size(n.ok_or_else(missing)?)
                    .runtime(deadpool::Runtime::Tokio1)
                    .wait_timeout(Some(config.checkout_timeout))
                    .build()
                    .map_err(|e| StrategyError::Library(spec.to_string(), e.to_string()))?;
                Ok(Checkout::Deadpool(pool, counters))
            }
            RunBy::Library(Library::Bb8, n) => {
                let pool = bb8::Pool::builder()
                    .max_size(n.ok_or_else(missing)? as u32)
                    .connection_timeout(config.checkout_timeout)
                    .test_on_check_out(false)
                    .retry_connection(false)
                    .idle_timeout(config.idle_timeout)
                    .max_lifetime(config.max_lifetime)
                    .build_unchecked(adapter);
                Ok(Checkout::Bb8(pool, counters))
            }
            RunBy::Library(Library::MysqlAsync, _) => {
                match adapter.target.client_pool(spec, &config) {
                    Some(pool) => Ok(Checkout::Client(pool, config.checkout_timeout, counters)),
                    None => Err(StrategyError::Library(
                        spec.to_string(),
                        "this target has no client pool of its own".into(),
                    )),
                }
            }
        }
    }
}

impl<T: Target> Checkout<T> {
    pub(crate) async fn acquire(
        &self,
        key: usize,
        turn: Option<usize>,
    ) -> Result<Checked<T>, Fault> {
        match self {
            Checkout::Ours(s) => Ok(Checked::Ours(match turn {
                Some(turn) => s.acquire_turn(key, turn).await?,
                None => s.acquire_keyed(key).await?,
            })),
            Checkout::Deadpool(p, c) => {
                use deadpool::managed::PoolError;
                c.checkouts.fetch_add(1, Relaxed);
                // The libraries' checkouts are large futures: boxed, so they
                // do not grow ours (moved on every request).
                match Box::pin(p.get()).await {
                    Ok(o) => Ok(Checked::Deadpool(o)),
                    Err(PoolError::Backend(e)) => Err(Fault::from(e)),
                    Err(PoolError::Timeout(_)) => {
                        c.timeouts.fetch_add(1, Relaxed);
                        Err(ErrorKind::CheckoutTimeout.into())
                    }
                    Err(_) => Err(ErrorKind::Reset.into()),
                }
            }
            Checkout::Bb8(p, c) => {
                c.checkouts.fetch_add(1, Relaxed);
                match Box::pin(p.get_owned()).await {
                    Ok(o) => Ok(Checked::Bb8(o)),
                    Err(bb8::RunError::User(e)) => Err(Fault::from(e)),
                    Err(bb8::RunError::TimedOut) => {
                        c.timeouts.fetch_add(1, Relaxed);
                        Err(ErrorKind::CheckoutTimeout.into())
                    }
                }
            }
            Checkout::Client(p, timeout, c) => client_checkout(p.as_ref(), *timeout, c).await,
        }
    }

    /// Open connections ahead of demand (ours only; the libraries open
    /// lazily as configured here).
    pub(crate) async fn prefill(&self) {
        if let Checkout::Ours(s) = self {
            let _ = s.prefill().await;
        }
    }

    /// A worker waited `wait` in the engine's line (our pools only).
    pub(crate) fn waited_in_line(&self, wait: Duration) {
        if let Checkout::Ours(s) = self {
            s.waited_in_line(wait);
        }
    }

    /// A worker in the engine's line gave up at the checkout timeout.
    pub(crate) fn timed_out_in_line(&self) {
        if let Checkout::Ours(s) = self {
            s.timed_out_in_line();
        }
    }

    pub(crate) fn metrics(&self) -> PoolCounters {
        match self {
            Checkout::Ours(s) => s.metrics(),
            Checkout::Deadpool(_, c) | Checkout::Bb8(_, c) => c.snapshot(),
            Checkout::Client(p, _, c) => {
                let counts = p.counts();
                PoolCounters {
                    opened: counts.opened,
                    open: counts.open,
                    connect_errors: counts.connect_errors,
                    peak_open: c.peak_open.load(Relaxed).max(counts.open),
                    ..c.snapshot()
                }
            }
        }
    }

    pub(crate) fn idle(&self) -> usize {
        match self {
            Checkout::Ours(s) => s.idle(),
            Checkout::Deadpool(p, _) => p.status().available,
            Checkout::Bb8(p, _) => p.state().idle_connections as usize,
            Checkout::Client(p, ..) => p.counts().idle as usize,
        }
    }

    pub(crate) fn close_idle(&self) {
        match self {
            Checkout::Ours(s) => s.close_idle(),
            Checkout::Deadpool(p, _) => {
                p.retain(|_, _| false);
            }
            // bb8 and the client pools close their idle connections when
            // the pool is dropped.
            Checkout::Bb8(..) | Checkout::Client(..) => {}
        }
    }
}

impl<T: Target> Clone for Checkout<T> {
    fn clone(&self) -> Self {
        match self {
            Checkout::Ours(s) => Checkout::Ours(s.clone()),
            Checkout::Deadpool(p, c) => Checkout::Deadpool(p.clone(), c.clone()),
            Checkout::Bb8(p, c) => Checkout::Bb8(p.clone(), c.clone()),
            Checkout::Client(p, t, c) => Checkout::Client(p.clone(), *t, c.clone()),
        }
    }
}

/// A connection on loan from any [`Checkout`]: derefs to the connection,
/// goes back when dropped, closed instead when marked broken.
pub(crate) enum Checked<T: Target> {
    Ours(Lease<T>),
    Deadpool(deadpool::managed::Object<Adapter<T>>),
    Bb8(bb8::PooledConnection<'static, Adapter<T>>),
    /// From a client's pool: back to it when dropped (the client discards
    /// a connection that failed).
    Client(T::Conn),
}

impl<T: Target> Checked<T> {
    pub(crate) fn mark_broken(&mut self) {
        match self {
            Checked::Ours(l) => l.mark_broken(),
            Checked::Deadpool(o) => o.broken = true,
            Checked::Bb8(o) => o.broken = true,
            Checked::Client(_) => {}
        }
    }

    /// A request on it was given up (timeout): closed, counted as closed
    /// by the client.
    pub(crate) fn mark_abandoned(&mut self) {
        match self {
            Checked::Ours(l) => l.mark_abandoned(),
            Checked::Deadpool(o) => o.abandon(),
            Checked::Bb8(o) => o.abandon(),
            Checked::Client(_) => {}
        }
    }

    /// When the connection was last given back (`None`: opened for this
    /// checkout, shared, or a library's pool that does not say).
    pub(crate) fn returned_at(&self) -> Option<Instant> {
        match self {
            Checked::Ours(l) => l.returned_at(),
            _ => None,
        }
    }

    /// The clock reading that ended the request on it: our pools stamp the
    /// connection's return with it (one clock read fewer per request).
    pub(crate) fn done_at(&mut self, at: Instant) {
        if let Checked::Ours(l) = self {
            l.done_at(at);
        }
    }

    pub(crate) fn take_connect_time(&mut self) -> Option<Duration> {
        match self {
            Checked::Ours(l) => l.take_connect_time(),
            Checked::Deadpool(o) => o.fresh.take(),
            Checked::Bb8(o) => o.fresh.take(),
            Checked::Client(_) => None,
        }
    }
}

impl<T: Target> Deref for Checked<T> {
    type Target = T::Conn;
    fn deref(&self) -> &T::Conn {
        match self {
            Checked::Ours(l) => l,
            Checked::Deadpool(o) => &o.conn,
            Checked::Bb8(o) => &o.conn,
            Checked::Client(c) => c,
        }
    }
}

impl<T: Target> DerefMut for Checked<T> {
    fn deref_mut(&mut self) -> &mut T::Conn {
        match self {
            Checked::Ours(l) => l,
            Checked::Deadpool(o) => &mut o.conn,
            Checked::Bb8(o) => &mut o.conn,
            Checked::Client(c) => c,
        }
    }
}

/// A checkout from a client's pool, within the checkout timeout, counted
/// as the libraries' are.
async fn client_checkout<T: Target>(
    pool: &dyn ClientPool<T::Conn>,
    timeout: Duration,
    c: &LibraryCounters,
) -> Result<Checked<T>, Fault> {
    c.checkouts.fetch_add(1, Relaxed);
    match tokio::time::timeout(timeout, pool.get()).await {
        Ok(Ok(conn)) => {
            c.peak_open.fetch_max(pool.counts().open, Relaxed);
            Ok(Checked::Client(conn))
        }
        Ok(Err(e)) => Err(Fault::from(e)),
        Err(_) => {
            c.timeouts.fetch_add(1, Relaxed);
            Err(ErrorKind::CheckoutTimeout.into())
        }
    }
}

/// LibraryCounters kept for a library's pool (the libraries keep few of their own).
#[derive(Default)]
pub(crate) struct LibraryCounters {
    checkouts: AtomicU64,
    timeouts: AtomicU64,
    connect_errors: AtomicU64,
    opened: AtomicU64,
    closed_broken: AtomicU64,
    closed_other: AtomicU64,
    closed_abandoned: AtomicU64,
    open: AtomicU64,
    peak_open: AtomicU64,
}

impl LibraryCounters {
    fn snapshot(&self) -> PoolCounters {
        PoolCounters {
            checkouts: self.checkouts.load(Relaxed),
            timeouts: self.timeouts.load(Relaxed),
            connect_errors: self.connect_errors.load(Relaxed),
            opened: self.opened.load(Relaxed),
            closed_broken: self.closed_broken.load(Relaxed),
            closed_released: self.closed_other.load(Relaxed),
            closed_abandoned: self.closed_abandoned.load(Relaxed),
            open: self.open.load(Relaxed),
            peak_open: self.peak_open.load(Relaxed),
            ..PoolCounters::default()
        }
    }
}

/// A connection as the libraries hold it: counted while open.
pub(crate) struct Counted<C> {
    conn: C,
    broken: bool,
    /// How long opening it took, until the first lease reports it.
    fresh: Option<Duration>,
    counters: Arc<LibraryCounters>,
}

impl<C> Counted<C> {
    fn abandon(&mut self) {
        if !self.broken {
            self.counters.closed_abandoned.fetch_add(1, Relaxed);
        }
        self.broken = true;
    }
}

impl<C> Drop for Counted<C> {
    fn drop(&mut self) {
        let closed = if self.broken {
            &self.counters.closed_broken
        } else {
            &self.counters.closed_other
        };
        closed.fetch_add(1, Relaxed);
        self.counters.open.fetch_sub(1, Relaxed);
    }
}

/// deadpool's `Manager` and bb8's `ManageConnection` over a poolbench target.
pub(crate) struct Adapter<T> {
    target: T,
    counters: Arc<LibraryCounters>,
}

impl<T: Target> Adapter<T> {
    async fn open(&self) -> Result<Counted<T::Conn>, RequestError> {
        let t0 = Instant::now();
        // The libraries hand a connection to one holder at a time.
        match self.target.connect_exclusive().await {
            Ok(conn) => {
                self.counters.opened.fetch_add(1, Relaxed);
                let now = self.counters.open.fetch_add(1, Relaxed) + 1;
                self.counters.peak_open.fetch_max(now, Relaxed);
                Ok(Counted {
                    conn,
                    broken: false,
                    fresh: Some(t0.elapsed()),
                    counters: self.counters.clone(),
                })
            }
            Err(e) => {
                self.counters.connect_errors.fetch_add(1, Relaxed);
                Err(e)
            }
        }
    }

    fn broken(&self, c: &mut Counted<T::Conn>) -> bool {
        if !c.broken && self.target.is_broken(&mut c.conn) {
            c.broken = true;
        }
        c.broken
    }
}

impl<T: Target> deadpool::managed::Manager for Adapter<T> {
    type Type = Counted<T::Conn>;
    type Error = RequestError;

    async fn create(&self) -> Result<Self::Type, RequestError> {
        self.open().await
    }

    async fn recycle(
        &self,
        conn: &mut Self::Type,
        _metrics: &deadpool::managed::Metrics,
    ) -> deadpool::managed::RecycleResult<RequestError> {
        if self.broken(conn) {
            return Err(deadpool::managed::RecycleError::message("broken"));
        }
        Ok(())
    }
}

impl<T: Target> bb8::ManageConnection for Adapter<T> {
    type Connection = Counted<T::Conn>;
    type Error = RequestError;

    async fn connect(&self) -> Result<Self::Connection, RequestError> {
        self.open().await
    }

    async fn is_valid(&self, _conn: &mut Self::Connection) -> Result<(), RequestError> {
        Ok(())
    }

    fn has_broken(&self, conn: &mut Self::Connection) -> bool {
        self.broken(conn)
    }
}
