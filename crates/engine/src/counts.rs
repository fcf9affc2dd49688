//! Completions, errors, requests started and checkout waits per 100 ms
//! bucket, kept per load thread and merged once per cell into the
//! cell's [`Timeline`]. A load thread keeps only its latest buckets: older
//! ones are folded into one timeline for the cell ([`Counts::fold_into`]),
//! so an hour's run holds one copy of its timeline, not one per thread.
use poolbench_model::{Timeline, BUCKET};
use std::time::{Duration, Instant};

/// Per-thread counts by bucket, from bucket `base` on; merged once per cell.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counts {
    /// The bucket index 0 of each vector stands for.
    base: usize,
    ok: Vec<u32>,
    errors: Vec<u32>,
    started: Vec<u32>,
    /// Checkout waits of the successes, summed, in µs.
    wait_us: Vec<u64>,
    /// What fell before `base` since the last fold (a long request's
    /// start), kept aside until then.
    behind: Vec<Behind>,
}

/// One count for a bucket already folded away.
#[derive(Clone, Copy, Debug)]
enum Behind {
    Started(usize),
    Done(usize, bool),
    Wait(usize, u64),
}

fn bump(v: &mut Vec<u32>, i: usize) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
}

fn add_wait(v: &mut Vec<u64>, i: usize, us: u64) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += us;
}

/// The bucket `t` falls in, counting from `origin`.
pub(crate) fn bucket(origin: Instant, t: Instant) -> usize {
    (t.saturating_duration_since(origin).as_millis() / BUCKET.as_millis()) as usize
}

/// Most buckets reserved ahead (about 4.6 days at 100 ms).
const MOST_RESERVED: usize = 1 << 22;

/// Buckets a load thread keeps after a fold (5 s); it folds again when it
/// holds twice as many.
pub(crate) const KEPT: usize = 50;

impl Counts {
    /// Counts with room for `buckets` completions, starts and waits: a long
    /// run's vectors are not grown by doubling (each doubling copies them,
    /// and an hour's run would hold twice its timeline for a moment); pages
    /// not yet reached are not resident.
    pub(crate) fn with_capacity(buckets: usize) -> Counts {
        let n = buckets.min(MOST_RESERVED);
        Counts {
            ok: Vec::with_capacity(n),
            started: Vec::with_capacity(n),
            wait_us: Vec::with_capacity(n),
            ..Counts::default()
        }
    }

    pub(crate) fn record(&mut self, started: usize, done: usize, ok: bool) {
        self.record_started(started);
        self.record_done(done, ok);
    }

    /// A success's checkout wait, in the bucket it completed in.
    pub(crate) fn wait(&mut self, done: usize, wait: Duration) {
        let us = wait.as_micros() as u64;
        match done.checked_sub(self.base) {
            Some(i) => add_wait(&mut self.wait_us, i, us),
            None => self.behind.push(Behind::Wait(done, us)),
        }
    }

    /// Whether this thread holds enough buckets to fold the older ones.
    pub(crate) fn due(&self) -> bool {
        self.behind.len() > KEPT || self.span() > 2 * KEPT
    }

    fn span(&self) -> usize {
        let lens = [self.ok.len(), self.errors.len(), self.started.len()];
        lens.into_iter().max().unwrap_or(0).max(self.wait_us.len())
    }

    /// Move every bucket but the latest [`KEPT`] (and what fell behind)
    /// into `into`, which starts at bucket 0.
    pub(crate) fn fold_into(&mut self, into: &mut Counts) {
        let moved = self.span().saturating_sub(KEPT);
        let older = Counts {
            base: self.base,
            ok: take_front(&mut self.ok, moved),
            errors: take_front(&mut self.errors, moved),
            started: take_front(&mut self.started, moved),
            wait_us: take_front(&mut self.wait_us, moved),
            behind: std::mem::take(&mut self.behind),
        };
        self.base += moved;
        into.merge(&older);
    }

    /// Add `o`'s counts to these, which start at or before `o`'s.
    pub(crate) fn merge(&mut self, o: &Counts) {
        debug_assert!(self.base <= o.base, "merged into later counts");
        let at = o.base.saturating_sub(self.base);
        let wait_len = at + o.wait_us.len();
        if !o.wait_us.is_empty() && self.wait_us.len() < wait_len {
            self.wait_us.resize(wait_len, 0);
        }
        for (a, b) in self.wait_us.iter_mut().skip(at).zip(&o.wait_us) {
            *a += b;
        }
        for (mine, theirs) in [
            (&mut self.ok, &o.ok),
            (&mut self.errors, &o.errors),
            (&mut self.started, &o.started),
        ] {
            if !theirs.is_empty() && mine.len() < at + theirs.len() {
                mine.resize(at + theirs.len(), 0);
            }
            for (a, b) in mine.iter_mut().skip(at).zip(theirs) {
                *a += b;
            }
        }
        for b in &o.behind {
            match *b {
                Behind::Started(s) => self.record_started(s),
                Behind::Done(d, ok) => self.record_done(d, ok),
                Behind::Wait(d, us) => self.wait(d, Duration::from_micros(us)),
            }
        }
    }

    fn record_started(&mut self, started: usize) {
        match started.checked_sub(self.base) {
            Some(i) => bump(&mut self.started, i),
            None => self.behind.push(Behind::Started(started)),
        }
    }

    fn record_done(&mut self, done: usize, ok: bool) {
        match done.checked_sub(self.base) {
            Some(i) => bump(if ok { &mut self.ok } else { &mut self.errors }, i),
            None => self.behind.push(Behind::Done(done, ok)),
        }
    }

    pub(crate) fn timeline(&self, measure_from_bucket: usize) -> Timeline {
        debug_assert_eq!(self.base, 0, "a timeline is read from merged counts");
        let len = self.ok.len().max(self.errors.len()).max(self.started.len());
        let at = |v: &Vec<u32>, i: usize| v.get(i).copied().unwrap_or(0);
        let mut inflight = Vec::with_capacity(len);
        let mut open: i64 = 0;
        for i in 0..len {
            open += i64::from(at(&self.started, i))
                - i64::from(at(&self.ok, i))
                - i64::from(at(&self.errors, i));
            inflight.push(open.max(0) as u32);
        }
        Timeline {
            bucket_ms: BUCKET.as_millis() as u64,
            measure_from_bucket,
            ok: (0..len).map(|i| at(&self.ok, i)).collect(),
            errors: (0..len).map(|i| at(&self.errors, i)).collect(),
            inflight,
            open: Vec::new(),
            wait_us: Vec::new(),
        }
    }

    /// The checkout waits per bucket (µs, summed over the successes).
    pub(crate) fn waits(&self) -> Vec<u64> {
        self.wait_us.clone()
    }
}

/// The first `n` values of `v` (fewer if it is shorter), the rest moved
/// to the front in place.
fn take_front<T: Copy>(v: &mut Vec<T>, n: usize) -> Vec<T> {
    let n = n.min(v.len());
    v.drain(..n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's counts folded every few records read as the same
    /// timeline as counts never folded, long requests included.
    #[test]
    fn folding_keeps_every_count_in_its_bucket() {
        let (mut whole, mut slot, mut folded) =
            (Counts::default(), Counts::default(), Counts::default());
        let mut seed = 7u64;
        let mut folds = 0;
        for done in 0..2_000usize {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Most requests start in their bucket; one in 16 took up to 30 s.
            let back = match seed >> 60 {
                0 => (seed >> 20) as usize % 300,
                _ => (seed >> 40) as usize % 2,
            };
            let started = done.saturating_sub(back);
            let ok = seed >> 63 == 0 || back < 200;
            for c in [&mut whole, &mut slot] {
                c.record(started, done, ok);
                c.wait(done, Duration::from_micros(seed >> 54));
            }
            if slot.due() {
                slot.fold_into(&mut folded);
                folds += 1;
                assert!(
                    slot.span() <= 2 * KEPT + 1,
                    "a thread keeps its latest buckets only"
                );
            }
        }
        assert!(folds > 10, "folded {folds} times");
        let mut merged = Counts::default();
        merged.merge(&folded);
        merged.merge(&slot);
        let (a, b) = (whole.timeline(3), merged.timeline(3));
        assert_eq!((a.ok, a.errors, a.inflight), (b.ok, b.errors, b.inflight));
        assert_eq!(whole.waits(), merged.waits());
    }
}
