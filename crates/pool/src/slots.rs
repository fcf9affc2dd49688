//! Fixed slots: `shared` is one slot, `round-robin:N` and `least-loaded:N`
//! are N. A request picks a slot (in turn, or the one with fewest requests
//! in flight) and waits there, FIFO, if the slot is busy.
use crate::config::PoolConfig;
use crate::error::AcquireError;
use crate::holders::Holders;
use crate::metrics::{CloseCause, Metrics};
use crate::tracked::Tracked;
use crate::Connector;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, OwnedMutexGuard};

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
    /// Requests waiting for or holding each slot.
    inflight: Vec<AtomicUsize>,
    pick: Pick,
    next: AtomicUsize,
    holders: Holders,
    config: PoolConfig,
    pub(crate) metrics: Metrics,
}

/// A held slot: which one, and its guard.
pub(crate) struct Held<T> {
    pub(crate) index: usize,
    pub(crate) guard: SlotGuard<T>,
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
            inflight: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            pick,
            next: AtomicUsize::new(0),
            holders: Holders::new(n),
            config,
            metrics: Metrics::default(),
        }
    }

    fn choose(&self) -> usize {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Relaxed) % n;
        if self.pick == Pick::RoundRobin || n == 1 {
            return start;
        }
        (0..n)
            .map(|k| (start + k) % n)
            .min_by_key(|&i| self.inflight[i].load(Relaxed))
            .unwrap_or(start)
    }

    /// Take a slot, connecting it if empty or broken. Cancel-safe: a dropped
    /// future leaves the slot as it was or empty.
    pub(crate) async fn checkout(&self) -> Result<Held<C::Conn>, AcquireError<C::Error>> {
        let index = self.choose();
        self.inflight[index].fetch_add(1, Relaxed);
        let counted = Inflight(&self.inflight[index]);
        let slot = &self.slots[index];
        let (mut guard, waited) = match slot.clone().try_lock_owned() {
            Ok(g) => (g, false),
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
                let g = slot.clone().lock_owned().await;
                self.metrics.waited_for(started.elapsed());
                (g, true)
            }
        };
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
            } else if idle_too_long {
                Some(CloseCause::Idle)
            } else {
                None
            };
            if let Some(cause) = cause {
                *guard = None;
                self.metrics.closed(cause);
            }
        }
        if guard.is_none() {
            match self.connector.connect().await {
                Ok(conn) => {
                    self.metrics.opened();
                    *guard = Some(Tracked::new(conn, &self.config, Some(index)));
                }
                Err(e) => {
                    self.metrics.connect_error();
                    return Err(AcquireError::Connect(e));
                }
            }
        }
        // The lease carries the in-flight count from here on.
        std::mem::forget(counted);
        self.holders.hold(Some(index));
        self.metrics.checkout(waited);
        Ok(Held { index, guard })
    }

    pub(crate) fn checkin(&self, held: &mut Held<C::Conn>, broken: bool) {
        self.holders.unhold(Some(held.index));
        self.inflight[held.index].fetch_sub(1, Relaxed);
        self.metrics.checkin();
        if broken && held.guard.take().is_some() {
            self.metrics.closed(CloseCause::Broken);
        } else if let Some(t) = held.guard.as_mut() {
            t.idle_since = Instant::now();
        }
    }

    /// Close every connection not in use.
    pub(crate) fn close_idle(&self) {
        for slot in &self.slots {
            if let Ok(mut g) = slot.try_lock() {
                if g.take().is_some() {
                    self.metrics.closed(CloseCause::Released);
                }
            }
        }
    }

    pub(crate) fn idle_count(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.try_lock().is_ok_and(|g| g.is_some()))
            .count()
    }
}
