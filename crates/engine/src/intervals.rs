//! Latency per second of the measured window, for HdrHistogram interval
//! logs (`--hdr-log`). Each recorder fills the histogram of the second in
//! progress and encodes it when the next second begins, so a long cell
//! keeps a few hundred bytes per second, not a histogram per second.
use hdrhistogram::Histogram;
use poolbench_model::{decode_histogram, encode_histogram, new_histogram, LatencyInterval};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Intervals being recorded: the current second's histogram, and the
/// finished seconds, encoded.
pub(crate) struct Intervals {
    current: Option<(u32, Histogram<u64>)>,
    done: BTreeMap<u32, String>,
}

impl Intervals {
    pub(crate) fn new() -> Self {
        Intervals {
            current: None,
            done: BTreeMap::new(),
        }
    }

    /// A latency completed in second `second` of the measured window. A
    /// completion recorded just after the next second began (two threads
    /// sharing a recorder) counts in the second in progress.
    pub(crate) fn record(&mut self, second: u32, ns: u64) {
        match &mut self.current {
            Some((s, h)) if *s >= second => {
                let _ = h.record(ns);
            }
            current => {
                if let Some((s, h)) = current.take() {
                    add_encoded(&mut self.done, s, &h);
                }
                let mut h = new_histogram();
                let _ = h.record(ns);
                *current = Some((second, h));
            }
        }
    }

    /// Every second of `other` added to this one's.
    pub(crate) fn merge(&mut self, other: &Intervals) {
        if let Some((s, h)) = self.current.take() {
            add_encoded(&mut self.done, s, &h);
        }
        for (s, text) in &other.done {
            if let Ok(h) = decode_histogram(text) {
                add_encoded(&mut self.done, *s, &h);
            }
        }
        if let Some((s, h)) = &other.current {
            add_encoded(&mut self.done, *s, h);
        }
    }

    /// The intervals of a window that began at `from` (a clock read) and
    /// lasted `measured`, with wall-clock starts.
    pub(crate) fn finish(mut self, from: Instant, measured: Duration) -> Vec<LatencyInterval> {
        if let Some((s, h)) = self.current.take() {
            add_encoded(&mut self.done, s, &h);
        }
        let unix_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let from_unix = unix_now - from.elapsed().as_secs_f64();
        let total = measured.as_secs_f64();
        self.done
            .into_iter()
            .map(|(s, latency_ns)| LatencyInterval {
                second: s,
                start_unix_s: from_unix + s as f64,
                duration_s: (total - s as f64).clamp(0.0, 1.0),
                latency_ns,
            })
            .collect()
    }
}

fn add_encoded(done: &mut BTreeMap<u32, String>, second: u32, h: &Histogram<u64>) {
    let merged = match done.get(&second).map(|t| decode_histogram(t)) {
        Some(Ok(mut have)) => {
            let _ = have.add(h);
            have
        }
        _ => h.clone(),
    };
    done.insert(second, encode_histogram(&merged));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_merge_across_recorders_and_keep_every_value() {
        let mut a = Intervals::new();
        let mut b = Intervals::new();
        for ns in [1_000, 2_000, 3_000] {
            a.record(0, ns);
            b.record(0, ns * 10);
        }
        a.record(1, 5_000);
        b.record(2, 7_000);
        // A straggler of second 1 after second 2 began counts in 2.
        b.record(1, 9_000);
        a.merge(&b);
        let from = Instant::now();
        let got = a.finish(from, Duration::from_millis(2_500));
        let counts: Vec<(u64, f64)> = got
            .iter()
            .map(|i| (decode_histogram(&i.latency_ns).unwrap().len(), i.duration_s))
            .collect();
        assert_eq!(counts, vec![(6, 1.0), (1, 1.0), (2, 0.5)]);
        assert!((got[1].start_unix_s - got[0].start_unix_s - 1.0).abs() < 1e-6);
    }
}
