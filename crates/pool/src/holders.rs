//! Which task holds which connection, for nested-checkout detection.
//!
//! Each connection a bounded strategy opens takes an index here; a lease
//! writes its task's id at that index and clears it on return. Only a
//! checkout that is about to wait scans the table, so the hot path costs one
//! relaxed store each way.
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

pub(crate) struct Holders {
    slots: Box<[AtomicU64]>,
    free: Mutex<Vec<usize>>,
}

impl Holders {
    pub(crate) fn new(n: usize) -> Self {
        Holders {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            free: Mutex::new((0..n).rev().collect()),
        }
    }

    /// An index for a new connection; `None` when all are taken (the
    /// connection is then not tracked).
    pub(crate) fn claim(&self) -> Option<usize> {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    /// Give back a closed connection's index.
    pub(crate) fn release(&self, index: Option<usize>) {
        if let Some(i) = index {
            self.slots[i].store(0, Relaxed);
            self.free.lock().unwrap_or_else(|p| p.into_inner()).push(i);
        }
    }

    pub(crate) fn hold(&self, index: Option<usize>) {
        if let Some(i) = index {
            self.slots[i].store(current_task(), Relaxed);
        }
    }

    pub(crate) fn unhold(&self, index: Option<usize>) {
        if let Some(i) = index {
            self.slots[i].store(0, Relaxed);
        }
    }

    /// Does the current task hold a connection of this strategy?
    pub(crate) fn held_by_current(&self) -> bool {
        let me = current_task();
        me != 0 && self.slots.iter().any(|s| s.load(Relaxed) == me)
    }
}

/// The current tokio task as a non-zero number, or 0 outside a task.
pub(crate) fn current_task() -> u64 {
    match tokio::task::try_id() {
        Some(id) => {
            let mut h = Capture(0);
            id.hash(&mut h);
            // Ids are non-zero; keep them distinct (no bit tricks).
            h.0.max(1)
        }
        None => 0,
    }
}

/// Keeps what the id writes; ids are numbers already.
struct Capture(u64);

impl Hasher for Capture {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
