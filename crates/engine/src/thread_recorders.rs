//! Recording per load thread, not per worker: every task running on a
//! thread records into that thread's recorder, so memory does not grow with
//! the number of workers and no histogram is resized per worker. The
//! recorders are merged once per cell. Each keeps only its latest
//! timeline buckets; older ones go to one timeline for the cell.
use crate::counts::{Counts, KEPT};
use crate::record::Recorder;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// A number for this thread, the first time it records.
    static THREAD: usize = NEXT_THREAD.fetch_add(1, Relaxed);
}

/// One recorder per thread slot. Two threads may share a slot (then its
/// lock is briefly contended); a worker never owns one.
pub(crate) struct ThreadRecorders {
    slots: Box<[Mutex<Recorder>]>,
    /// The timeline's buckets the slots have folded away.
    folded: Mutex<Counts>,
}

impl ThreadRecorders {
    /// Enough slots for `threads` load threads (and the odd other thread);
    /// with `intervals`, each also keeps latency per second; each timeline
    /// with room for `buckets` (the cell's length in 100 ms buckets).
    pub(crate) fn new(threads: usize, intervals: bool, buckets: usize) -> Self {
        let n = (threads.max(1) * 2).next_power_of_two();
        ThreadRecorders {
            slots: (0..n)
                .map(|_| Mutex::new(Recorder::with_intervals(intervals, 2 * KEPT + 1)))
                .collect(),
            folded: Mutex::new(Counts::with_capacity(buckets)),
        }
    }

    /// Record into the calling thread's recorder.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        let i = THREAD.with(|t| *t) % self.slots.len();
        let mut r = self.slots[i].lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&mut r);
        if r.counts.due() {
            r.counts
                .fold_into(&mut self.folded.lock().unwrap_or_else(|p| p.into_inner()));
        }
        out
    }

    /// Read every slot in turn (each locked only while `f` reads it).
    pub(crate) fn each(&self, mut f: impl FnMut(&Recorder)) {
        for slot in self.slots.iter() {
            f(&slot.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// Every slot merged into one recorder.
    pub(crate) fn merged(&self) -> Recorder {
        let mut out = Recorder::new();
        out.counts
            .merge(&self.folded.lock().unwrap_or_else(|p| p.into_inner()));
        for slot in self.slots.iter() {
            out.merge(&slot.lock().unwrap_or_else(|p| p.into_inner()));
        }
        out
    }
}
