//! Completions, errors, requests started and checkout waits per 100 ms
//! bucket, kept per load thread and merged once per cell into the
//! cell's [`Timeline`].
use poolbench_model::{Timeline, BUCKET};
use std::time::{Duration, Instant};

/// Per-worker counts by bucket; merged once per cell.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counts {
    ok: Vec<u32>,
    errors: Vec<u32>,
    started: Vec<u32>,
    /// Checkout waits of the successes, summed, in µs.
    wait_us: Vec<u64>,
}

fn bump(v: &mut Vec<u32>, i: usize) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
}

/// The bucket `t` falls in, counting from `origin`.
pub(crate) fn bucket(origin: Instant, t: Instant) -> usize {
    (t.saturating_duration_since(origin).as_millis() / BUCKET.as_millis()) as usize
}

/// Most buckets reserved ahead (about 4.6 days at 100 ms).
const MOST_RESERVED: usize = 1 << 22;

impl Counts {
    /// Counts with room for `buckets` completions and starts: a long run's
    /// vectors are not grown by doubling (each doubling copies them, and
    /// an hour's run would hold twice its timeline for a moment); pages
    /// not yet reached are not resident.
    pub(crate) fn with_capacity(buckets: usize) -> Counts {
        let n = buckets.min(MOST_RESERVED);
        Counts {
            ok: Vec::with_capacity(n),
            started: Vec::with_capacity(n),
            ..Counts::default()
        }
    }

    pub(crate) fn record(&mut self, started: usize, done: usize, ok: bool) {
        bump(&mut self.started, started);
        bump(if ok { &mut self.ok } else { &mut self.errors }, done);
    }

    /// A success's checkout wait, in the bucket it completed in.
    pub(crate) fn wait(&mut self, done: usize, wait: Duration) {
        if self.wait_us.len() <= done {
            self.wait_us.resize(done + 1, 0);
        }
        self.wait_us[done] += wait.as_micros() as u64;
    }

    pub(crate) fn merge(&mut self, o: &Counts) {
        if self.wait_us.len() < o.wait_us.len() {
            self.wait_us.resize(o.wait_us.len(), 0);
        }
        for (a, b) in self.wait_us.iter_mut().zip(&o.wait_us) {
            *a += b;
        }
        for (mine, theirs) in [
            (&mut self.ok, &o.ok),
            (&mut self.errors, &o.errors),
            (&mut self.started, &o.started),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    pub(crate) fn timeline(&self, measure_from_bucket: usize) -> Timeline {
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
