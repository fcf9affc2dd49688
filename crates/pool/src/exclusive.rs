//! Exclusive checkout: `pool`, `elastic`, `take-or-create` and `per-request`
//! are one machine with different limits.
use crate::config::PoolConfig;
use crate::error::AcquireError;
use crate::holders::Holders;
use crate::metrics::{CloseCause, Metrics};
use crate::tracked::Tracked;
use crate::Connector;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) struct Exclusive<C: Connector> {
    pub(crate) connector: C,
    /// At most this many leased (and so open) at once; `None`: unbounded.
    limit: Option<Arc<Semaphore>>,
    size: usize,
    /// Who holds what, where checkouts can wait.
    holders: Option<Holders>,
    /// Idle connections, oldest first; checkout takes the newest.
    idle: Mutex<VecDeque<Tracked<C::Conn>>>,
    /// Most connections kept idle.
    max_idle: usize,
    /// Connections above this many open are overflow, closed after a grace.
    core: usize,
    pub(crate) config: PoolConfig,
    pub(crate) metrics: Metrics,
}

pub(crate) struct Checkout<T> {
    pub(crate) conn: Tracked<T>,
    pub(crate) permit: Option<OwnedSemaphorePermit>,
}

impl<C: Connector> Exclusive<C> {
    pub(crate) fn new(
        connector: C,
        limit: Option<usize>,
        max_idle: usize,
        core: usize,
        config: PoolConfig,
    ) -> Self {
        Exclusive {
            connector,
            limit: limit.map(|n| Arc::new(Semaphore::new(n))),
            size: limit.unwrap_or(max_idle),
            holders: limit.map(Holders::new),
            idle: Mutex::new(VecDeque::with_capacity(max_idle.min(1024))),
            max_idle,
            core,
            config,
            metrics: Metrics::default(),
        }
    }

    /// Checkout without waiting: a free permit and an idle connection.
    pub(crate) fn try_checkout(&self) -> Option<Checkout<C::Conn>> {
        let permit = match &self.limit {
            Some(sem) => Some(sem.clone().try_acquire_owned().ok()?),
            None => None,
        };
        let conn = self.take_idle()?;
        self.hold(&conn);
        self.metrics.checkout(false);
        Some(Checkout { conn, permit })
    }

    /// Checkout, waiting in FIFO order for a permit and connecting if no
    /// idle connection is left. Cancel-safe: dropping the future releases
    /// the permit and the half-open connection.
    pub(crate) async fn checkout(&self) -> Result<Checkout<C::Conn>, AcquireError<C::Error>> {
        let mut waited = false;
        let permit = match &self.limit {
            None => None,
            Some(sem) => match sem.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    waited = true;
                    self.check_nested()?;
                    let started = Instant::now();
                    let p = sem.clone().acquire_owned().await;
                    self.metrics.waited_for(started.elapsed());
                    Some(p.expect("the pool never closes its semaphore"))
                }
            },
        };
        let conn = match self.take_idle() {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        self.hold(&conn);
        self.metrics.checkout(waited);
        Ok(Checkout { conn, permit })
    }

    /// Count a wait by a task that already holds a connection here; refuse
    /// it if so configured.
    fn check_nested(&self) -> Result<(), AcquireError<C::Error>> {
        if self.holders.as_ref().is_some_and(|h| h.held_by_current()) {
            self.metrics.nested_wait();
            if self.config.fail_on_nested {
                return Err(AcquireError::NestedCheckout { size: self.size });
            }
        }
        Ok(())
    }

    fn hold(&self, t: &Tracked<C::Conn>) {
        if let Some(h) = &self.holders {
            h.hold(t.holder);
        }
    }

    /// Close a connection and count why.
    fn discard(&self, t: Tracked<C::Conn>, cause: CloseCause) {
        if let Some(h) = &self.holders {
            h.release(t.holder);
        }
        drop(t);
        self.metrics.closed(cause);
    }

    async fn connect(&self) -> Result<Tracked<C::Conn>, AcquireError<C::Error>> {
        match self.connector.connect().await {
            Ok(conn) => {
                self.metrics.opened();
                let holder = self.holders.as_ref().and_then(|h| h.claim());
                Ok(Tracked::new(conn, &self.config, holder))
            }
            Err(e) => {
                self.metrics.connect_error();
                Err(AcquireError::Connect(e))
            }
        }
    }

    fn lock_idle(&self) -> MutexGuard<'_, VecDeque<Tracked<C::Conn>>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take_idle(&self) -> Option<Tracked<C::Conn>> {
        let now = Instant::now();
        let mut idle = self.lock_idle();
        while let Some(mut t) = idle.pop_back() {
            let cause = if t.expired(now) {
                CloseCause::Lifetime
            } else if self.idle_too_long(&t, now) {
                CloseCause::Idle
            } else if self.connector.is_broken(&mut t.conn) {
                CloseCause::Broken
            } else {
                return Some(t);
            };
            self.discard(t, cause);
        }
        None
    }

    fn idle_too_long(&self, t: &Tracked<C::Conn>, now: Instant) -> bool {
        self.config
            .idle_timeout
            .is_some_and(|limit| now.duration_since(t.idle_since) >= limit)
    }

    /// A lease ends: keep the connection idle or close it.
    pub(crate) fn checkin(&self, mut t: Tracked<C::Conn>, broken: bool) {
        self.metrics.checkin();
        if let Some(h) = &self.holders {
            h.unhold(t.holder);
        }
        let now = Instant::now();
        let cause = if broken || self.connector.is_broken(&mut t.conn) {
            CloseCause::Broken
        } else if t.expired(now) {
            CloseCause::Lifetime
        } else {
            let mut idle = self.lock_idle();
            if idle.len() < self.max_idle {
                t.idle_since = now;
                idle.push_back(t);
                drop(idle);
                if self.metrics.open() > self.core as u64 {
                    self.reap();
                }
                return;
            }
            if self.max_idle == 0 {
                CloseCause::Released
            } else {
                CloseCause::Overflow
            }
        };
        self.discard(t, cause);
    }

    /// Close idle connections past their idle timeout or lifetime, and
    /// overflow connections idle longer than the overflow grace.
    pub(crate) fn reap(&self) {
        let now = Instant::now();
        let mut closed = Vec::new();
        {
            let mut idle = self.lock_idle();
            let mut excess = (self.metrics.open() as usize).saturating_sub(self.core);
            let mut kept = VecDeque::with_capacity(idle.len());
            while let Some(t) = idle.pop_front() {
                let cause = if t.expired(now) {
                    Some(CloseCause::Lifetime)
                } else if self.idle_too_long(&t, now) {
                    Some(CloseCause::Idle)
                } else if excess > 0
                    && now.duration_since(t.idle_since) >= self.config.overflow_grace
                {
                    Some(CloseCause::Overflow)
                } else {
                    None
                };
                match cause {
                    Some(cause) => {
                        excess = excess.saturating_sub(1);
                        closed.push((t, cause));
                    }
                    None => kept.push_back(t),
                }
            }
            *idle = kept;
        }
        for (t, cause) in closed {
            self.discard(t, cause);
        }
    }

    /// Close every idle connection.
    pub(crate) fn close_idle(&self) {
        let drained: Vec<_> = self.lock_idle().drain(..).collect();
        for t in drained {
            self.discard(t, CloseCause::Released);
        }
    }

    /// Open connections until `min_idle` are idle (capped at what the
    /// strategy keeps idle). Returns how many were opened.
    pub(crate) async fn prefill(&self) -> Result<usize, AcquireError<C::Error>> {
        let want = self.config.min_idle.min(self.max_idle);
        let mut opened = 0;
        while self.idle_count() < want {
            let mut t = self.connect().await?;
            t.idle_since = Instant::now();
            self.lock_idle().push_back(t);
            opened += 1;
        }
        Ok(opened)
    }

    pub(crate) fn idle_count(&self) -> usize {
        self.lock_idle().len()
    }
}
