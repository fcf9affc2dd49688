//! Recording per load thread, not per worker: every task running on a
//! thread records into that thread's recorder, so memory does not grow with
//! the number of workers and no histogram is resized per worker. The
//! recorders are merged once per cell. Each keeps only its latest
//! timeline buckets; older ones go to one timeline for the cell.
use crate::counts::{Counts, KEPT};
use crate::record::Recorder;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// A number for each set of recorders, so a thread knows its slot is
/// for this set and not a set of an earlier cell.
static NEXT_SET: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// This thread's slot: (the set, the slot in it).
    static SLOT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// One recorder per thread slot. Slots are dealt to threads in the order
/// they first record, per set: numbering threads once for the process
/// would let two load threads of a later run (tune runs a fresh engine per
/// point) land on the same slot and contend for its lock on every request.
/// Two threads share a slot only when there are more threads than slots
/// (then its lock is briefly contended); a worker never owns one.
pub(crate) struct ThreadRecorders {
    set: usize,
    next: AtomicUsize,
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
            set: NEXT_SET.fetch_add(1, Relaxed),
            next: AtomicUsize::new(0),
            slots: (0..n)
                .map(|_| Mutex::new(Recorder::with_intervals(intervals, 2 * KEPT + 1)))
                .collect(),
            folded: Mutex::new(Counts::with_capacity(buckets)),
        }
    }

    /// Record into the calling thread's recorder.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        let i = self.slot();
        let mut r = self.slots[i].lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&mut r);
        if r.counts.due() {
            r.counts
                .fold_into(&mut self.folded.lock().unwrap_or_else(|p| p.into_inner()));
        }
        out
    }

    /// The calling thread's slot in this set, dealt on its first record.
    fn slot(&self) -> usize {
        SLOT.with(|s| match s.get() {
            (set, i) if set == self.set => i,
            _ => {
                let i = self.next.fetch_add(1, Relaxed) % self.slots.len();
                s.set((self.set, i));
                i
            }
        })
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

#[cfg(test)]
mod tests {
    use super::ThreadRecorders;

    /// Each run starts threads of its own, and other threads start between
    /// them (the runtime's workers, the hiccup watch); however many, two
    /// load threads of a new set get slots of their own.
    #[test]
    fn the_threads_of_every_new_set_get_slots_of_their_own() {
        for others in 0..12 {
            let set = ThreadRecorders::new(2, false, 0);
            let elsewhere = ThreadRecorders::new(2, false, 0);
            let (a, b) = std::thread::scope(|s| {
                let a = s.spawn(|| (set.slot(), set.slot())).join().unwrap();
                for _ in 0..others {
                    s.spawn(|| elsewhere.slot()).join().unwrap();
                }
                (a, s.spawn(|| set.slot()).join().unwrap())
            });
            // A thread asking again keeps its slot.
            assert_eq!(a.0, a.1);
            assert_ne!(a.0, b, "{others} other threads between them");
        }
    }
}
