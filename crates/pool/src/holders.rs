//! Which task holds which slot (`shared`, `round-robin`, `least-loaded`),
//! for nested-checkout detection: a lease writes its task's id at its slot
//! and clears it on return. Only a checkout about to wait scans the table.
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub(crate) struct Holders {
    slots: Box<[AtomicU64]>,
}

impl Holders {
    pub(crate) fn new(n: usize) -> Self {
        Holders {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
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
