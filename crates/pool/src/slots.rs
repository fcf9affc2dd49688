//! Fixed slots: `shared` is one slot, `round-robin:N` is N. Request i goes to
//! slot i mod N and waits there (FIFO) if the slot is busy.
use crate::config::PoolConfig;
use crate::error::AcquireError;
use crate::metrics::{CloseCause, Metrics};
use crate::tracked::Tracked;
use crate::Connector;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, OwnedMutexGuard};

pub(crate) type Slot<T> = Arc<Mutex<Option<Tracked<T>>>>;
pub(crate) type SlotGuard<T> = OwnedMutexGuard<Option<Tracked<T>>>;

pub(crate) struct Slots<C: Connector> {
    connector: C,
    slots: Vec<Slot<C::Conn>>,
    next: AtomicUsize,
    config: PoolConfig,
    pub(crate) metrics: Metrics,
}

impl<C: Connector> Slots<C> {
    pub(crate) fn new(connector: C, n: usize, config: PoolConfig) -> Self {
        Slots {
            connector,
            slots: (0..n.max(1)).map(|_| Arc::new(Mutex::new(None))).collect(),
            next: AtomicUsize::new(0),
            config,
            metrics: Metrics::default(),
        }
    }

    /// Take the next slot in turn, connecting it if empty or broken.
    /// Cancel-safe: a dropped future leaves the slot as it was or empty.
    pub(crate) async fn checkout(&self) -> Result<SlotGuard<C::Conn>, AcquireError<C::Error>> {
        let i = self.next.fetch_add(1, Relaxed) % self.slots.len();
        let slot = &self.slots[i];
        let (mut guard, waited) = match slot.clone().try_lock_owned() {
            Ok(g) => (g, false),
            Err(_) => (slot.clone().lock_owned().await, true),
        };
        if let Some(t) = guard.as_mut() {
            let cause = if self.connector.is_broken(&mut t.conn) {
                Some(CloseCause::Broken)
            } else if t.expired(Instant::now()) {
                Some(CloseCause::Lifetime)
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
                    *guard = Some(Tracked::new(conn, &self.config));
                }
                Err(e) => {
                    self.metrics.connect_error();
                    return Err(AcquireError::Connect(e));
                }
            }
        }
        self.metrics.checkout(waited);
        Ok(guard)
    }

    pub(crate) fn checkin(&self, guard: &mut SlotGuard<C::Conn>, broken: bool) {
        self.metrics.checkin();
        if broken && guard.take().is_some() {
            self.metrics.closed(CloseCause::Broken);
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
