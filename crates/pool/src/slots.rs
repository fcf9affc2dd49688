//! Fixed slots: `shared` is one slot, `round-robin:N` and `least-loaded:N`
//! are N. A request picks a slot (in turn, the caller's or a shared
//! counter's, or the one with fewest requests in flight) and waits there,
//! FIFO, if the slot is busy.
//!
//! Each slot has a FIFO semaphore of streams: one for a connection that
//! carries one request at a time, [`Connector::streams`] for a multiplexed
//! one, whose leases then share it through [`Connector::share`] handles.
//! Waiting for a stream is waiting for a checkout.
use crate::error::AcquireError;
use crate::holders::Holders;
use crate::metrics::{CloseCause, Metrics};
use crate::tracked::Tracked;
use crate::Connector;
use poolbench_pool_types::{PoolConfig, PoolCounters};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

pub(crate) type Slot<T> = Arc<Mutex<Option<Tracked<T>>>>;
pub(crate) type SlotGuard<T> = OwnedMutexGuard<Option<Tracked<T>>>;

/// How a request picks its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    RoundRobin,
    LeastLoaded,
}

pub(crate) struct Slots<C: Connector> {
    connector: C,
    slots: Vec<Slot<C::Conn>>,
    /// Streams free on each slot's connection.
    streams: Vec<Arc<Semaphore>>,
    /// Streams each slot's semaphore holds in all (changed under the slot lock).
    capacity: Vec<AtomicUsize>,
    /// Streams each slot's connection's server allows at once (0: a
    /// protocol without such a setting, or not connected yet).
    advertised: Vec<AtomicUsize>,
    /// Bumped under the slot lock each time the slot opens a connection.
    generation: Vec<AtomicU64>,
    /// Requests waiting for or holding each slot.
    inflight: Vec<AtomicUsize>,
    pick: Pick,
    next: AtomicUsize,
    holders: Holders,
    config: PoolConfig,
    pub(crate) metrics: Metrics,
}

/// A held slot: which one, how it is held, and the stream it uses.
pub(crate) struct Held<T> {
    pub(crate) index: usize,
    pub(crate) access: Access<T>,
    _stream: OwnedSemaphorePermit,
}

/// The connection of a held slot.
pub(crate) enum Access<T> {
    /// The slot itself, locked: one request at a time.
    Exclusive(SlotGuard<T>),
    /// A handle to the slot's multiplexed connection, opened in `generation`
    /// (in `fresh` time, if by this checkout).
    Shared {
        conn: T,
        generation: u64,
        fresh: Option<Duration>,
    },
}

impl<T> Held<T> {
    pub(crate) fn conn(&self) -> &T {
        match &self.access {
            Access::Exclusive(g) => &g.as_ref().expect("a held slot is connected").conn,
            Access::Shared { conn, .. } => conn,
        }
    }

    pub(crate) fn conn_mut(&mut self) -> &mut T {
        match &mut self.access {
            Access::Exclusive(g) => &mut g.as_mut().expect("a held slot is connected").conn,
            Access::Shared { conn, .. } => conn,
        }
    }

    /// How long opening the connection took, if this checkout opened it.
    pub(crate) fn take_fresh(&mut self) -> Option<Duration> {
        match &mut self.access {
            Access::Exclusive(g) => g.as_mut().and_then(|t| t.fresh.take()),
            Access::Shared { fresh, .. } => fresh.take(),
        }
    }
}

/// Counts a request against its slot until dropped, even if the checkout
/// future is cancelled.
struct Inflight<'a>(&'a AtomicUsize);

impl Drop for Inflight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

impl<C: Connector> Slots<C> {
    pub(crate) fn new(connector: C, n: usize, pick: Pick, config: PoolConfig) -> Self {
        let n = n.max(1);
        Slots {
            connector,
            slots: (0..n).map(|_| Arc::new(Mutex::new(None))).collect(),
            streams: (0..n).map(|_| Arc::new(Semaphore::new(1))).collect(),
            capacity: (0..n).map(|_| AtomicUsize::new(1)).collect(),
            advertised: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            generation: (0..n).map(|_| AtomicU64::new(0)).collect(),
            inflight: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            pick,
            next: AtomicUsize::new(0),
            holders: Holders::new(n),
            config,
            metrics: Metrics::default(),
        }
    }

    fn choose(&self, turn: Option<usize>) -> usize {
        let n = self.slots.len();
        if let (Some(t), Pick::RoundRobin) = (turn, self.pick) {
            return t % n;
        }
        let start = self.next.fetch_add(1, Relaxed) % n;
        if self.pick == Pick::RoundRobin || n == 1 {
            return start;
        }
        (0..n)
            .map(|k| (start + k) % n)
            .min_by_key(|&i| self.inflight[i].load(Relaxed))
            .unwrap_or(start)
    }

    /// Take a stream on a slot, connecting the slot if empty or broken.
    /// Cancel-safe: a dropped future leaves the slot as it was or empty.
    pub(crate) async fn checkout(
        &self,
        turn: Option<usize>,
    ) -> Result<Held<C::Conn>, AcquireError<C::Error>> {
        let index = self.choose(turn);
        self.inflight[index].fetch_add(1, Relaxed);
        let counted = Inflight(&self.inflight[index]);
        let streams = &self.streams[index];
        let (stream, waited) = match streams.clone().try_acquire_owned() {
            Ok(p) => (p, false),
            Err(_) => {
                if self.holders.held_by_current() {
                    self.metrics.nested_wait();
                    if self.config.fail_on_nested {
                        return Err(AcquireError::NestedCheckout {
                            size: self.slots.len(),
                        });
                    }
                }
                let started = Instant::now();
                let p = streams
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("slot semaphores are never closed");
                self.metrics.waited_for(started.elapsed());
                (p, true)
            }
        };
        let mut guard = self.slots[index].clone().lock_owned().await;
        self.refresh(index, &mut guard).await?;
        let t = guard.as_mut().expect("refresh leaves the slot connected");
        let shared = match self.connector.share(&t.conn) {
            Some(handle) => {
                let cap = self.connector.streams(&t.conn).max(1);
                let said = self.connector.advertised_streams(&t.conn).unwrap_or(0);
                self.advertised[index].store(said, Relaxed);
                self.resize(index, cap);
                (cap > 1).then_some(handle)
            }
            None => {
                self.resize(index, 1);
                None
            }
        };
        let access = match shared {
            Some(conn) => Access::Shared {
                conn,
                generation: self.generation[index].load(Relaxed),
                fresh: t.fresh.take(),
            },
            None => {
                self.holders.hold(Some(index));
                Access::Exclusive(guard)
            }
        };
        // The lease carries the in-flight count from here on.
        std::mem::forget(counted);
        self.metrics.checkout(waited);
        Ok(Held {
            index,
            access,
            _stream: stream,
        })
    }

    /// Close the slot's connection if it is broken, expired or idle too
    /// long, and open one if the slot is empty.
    async fn refresh(
        &self,
        index: usize,
        guard: &mut SlotGuard<C::Conn>,
    ) -> Result<(), AcquireError<C::Error>> {
        if let Some(t) = guard.as_mut() {
            let now = Instant::now();
            let idle_too_long = self
                .config
                .idle_timeout
                .is_some_and(|l| now.saturating_duration_since(t.idle_since) >= l);
            let cause = if self.connector.is_broken(&mut t.conn) {
                Some(CloseCause::Broken)
            } else if t.expired(now) {
                Some(CloseCause::Lifetime)
            } else if idle_too_long && self.unused(index) {
                Some(CloseCause::Idle)
            } else {
                None
            };
            if let Some(cause) = cause {
                **guard = None;
                self.metrics.closed(cause);
            }
        }
        if guard.is_none() {
            let started = Instant::now();
            // Boxed, as in `exclusive`: opening is rare, checkouts are not.
            match Box::pin(self.connector.connect()).await {
                Ok(conn) => {
                    self.metrics.opened();
                    self.generation[index].fetch_add(1, Relaxed);
                    let mut t = Tracked::new(conn, &self.config, Some(index));
                    t.fresh = Some(started.elapsed());
                    **guard = Some(t);
                }
                Err(e) => {
                    self.metrics.connect_error();
                    return Err(AcquireError::Connect(e));
                }
            }
        }
        if let Some(t) = guard.as_mut() {
            t.idle_since = Instant::now();
        }
        Ok(())
    }

    /// No lease uses the slot's connection besides the caller's stream.
    fn unused(&self, index: usize) -> bool {
        self.streams[index].available_permits() + 1 >= self.capacity[index].load(Relaxed)
    }

    /// Give slot `index` `cap` streams in all. Called under the slot lock.
    /// The counters, with the streams each connection's server allows (0
    /// where it set no limit).
    pub(crate) fn snapshot(&self) -> PoolCounters {
        let mut m = self.metrics.snapshot();
        m.streams_allowed = self
            .advertised
            .iter()
            .map(|a| a.load(Relaxed))
            .filter(|&n| n > 0)
            .map(|n| match n >= crate::UNLIMITED_STREAMS {
                true => 0,
                false => n as u64,
            })
            .collect();
        m
    }

    fn resize(&self, index: usize, cap: usize) {
        let have = self.capacity[index].load(Relaxed);
        if cap > have {
            self.streams[index].add_permits(cap - have);
            self.capacity[index].store(cap, Relaxed);
        } else if cap < have {
            // Streams in use now are forgotten as they come back, next time.
            let gone = self.streams[index].forget_permits(have - cap);
            self.capacity[index].store(have - gone, Relaxed);
        }
    }

    pub(crate) fn checkin(&self, held: &mut Held<C::Conn>, broken: bool) {
        let index = held.index;
        self.inflight[index].fetch_sub(1, Relaxed);
        self.metrics.checkin();
        match &mut held.access {
            Access::Exclusive(guard) => {
                self.holders.unhold(Some(index));
                if broken && guard.take().is_some() {
                    self.metrics.closed(CloseCause::Broken);
                } else if let Some(t) = guard.as_mut() {
                    t.idle_since = Instant::now();
                }
            }
            Access::Shared { generation, .. } => {
                if !broken {
                    return;
                }
                // Close it unless another lease already replaced it; if the
                // slot is busy, the next checkout's broken check does it.
                if let Ok(mut g) = self.slots[index].try_lock() {
                    if g.is_some() && self.generation[index].load(Relaxed) == *generation {
                        *g = None;
                        self.metrics.closed(CloseCause::Broken);
                    }
                }
            }
        }
    }

    /// Close every connection not in use.
    pub(crate) fn close_idle(&self) {
        for (i, slot) in self.slots.iter().enumerate() {
            if let Ok(mut g) = slot.try_lock() {
                if self.streams[i].available_permits() < self.capacity[i].load(Relaxed) {
                    continue;
                }
                if g.take().is_some() {
                    self.metrics.closed(CloseCause::Released);
                }
            }
        }
    }

    pub(crate) fn idle_count(&self) -> usize {
        (0..self.slots.len())
            .filter(|&i| {
                self.streams[i].available_permits() >= self.capacity[i].load(Relaxed)
                    && self.slots[i].try_lock().is_ok_and(|g| g.is_some())
            })
            .count()
    }
}
