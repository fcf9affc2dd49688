//! Completions, errors and requests in flight per 100 ms of a cell, so
//! stalls and warm-up effects can be seen.
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Width of one timeline bucket.
pub const BUCKET: Duration = Duration::from_millis(100);

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
