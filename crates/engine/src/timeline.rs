//! Completions, errors and requests in flight per 100 ms of a cell, so
//! stalls and warm-up effects can be seen.
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Width of one timeline bucket.
pub const BUCKET: Duration = Duration::from_millis(100);

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

impl Counts {
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

/// A cell's activity over time, from the start of its warm-up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timeline {
    /// Width of each bucket in milliseconds.
    pub bucket_ms: u64,
    /// The first measured bucket (the ones before are warm-up).
    pub measure_from_bucket: usize,
    /// Successful completions per bucket.
    pub ok: Vec<u32>,
    /// Failed completions per bucket.
    pub errors: Vec<u32>,
    /// Requests in flight at the end of each bucket.
    pub inflight: Vec<u32>,
    /// With `--ramp`: connections open, sampled in each bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<u32>,
    /// With `--ramp`: the successes' checkout waits per bucket, summed, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_us: Vec<u64>,
}

/// A time when requests were in flight and none succeeded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stall {
    /// Seconds from the start of the measured window.
    pub start_s: f64,
    /// How long it lasted, in seconds.
    pub duration_s: f64,
}

impl Timeline {
    /// Stretches of at least `min` with requests in flight and no success.
    pub fn stalls(&self, min: Duration) -> Vec<Stall> {
        let bucket = self.bucket_ms as f64 / 1000.0;
        let mut found = Vec::new();
        let mut run_start = None;
        for i in 0..=self.ok.len() {
            let stalled = i < self.ok.len() && self.ok[i] == 0 && self.inflight[i] > 0;
            match (stalled, run_start) {
                (true, None) => run_start = Some(i),
                (false, Some(s)) => {
                    let len = (i - s) as f64 * bucket;
                    if len + 1e-9 >= min.as_secs_f64() {
                        found.push(Stall {
                            start_s: (s as f64 - self.measure_from_bucket as f64) * bucket,
                            duration_s: len,
                        });
                    }
                    run_start = None;
                }
                _ => {}
            }
        }
        found
    }
}
