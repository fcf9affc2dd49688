//! What a run shows while it runs: per cell, the counts so far and the
//! histograms reduced to fixed buckets and a few quantiles (a
//! [`LiveCounters`], for `--metrics-listen`). The engine fills it on
//! demand; a renderer turns it into text. Counts only grow within a cell.
use hdrhistogram::Histogram;

/// Upper bounds of the live histograms' buckets, in nanoseconds (100 µs
/// to 10 s), every bucket counting the values at or below its bound.
pub const LIVE_BOUNDS_NS: [u64; 16] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// The quantiles a live histogram keeps.
pub const LIVE_QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// An HDR histogram reduced for a live view: cumulative counts at
/// [`LIVE_BOUNDS_NS`], the count and sum of all values, and the values
/// at [`LIVE_QUANTILES`]; nanoseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveHistogram {
    /// `at_or_below[i]`: values at or below `LIVE_BOUNDS_NS[i]`.
    pub at_or_below: [u64; LIVE_BOUNDS_NS.len()],
    pub count: u64,
    /// The sum of the values (each at the middle of its HDR bucket).
    pub sum_ns: u128,
    /// The value at each of [`LIVE_QUANTILES`] (0 when empty).
    pub quantiles_ns: [u64; LIVE_QUANTILES.len()],
}

impl LiveHistogram {
    /// `h` reduced. Both the bucket counts and the sum only grow as
    /// values are added to `h`.
    pub fn of(h: &Histogram<u64>) -> LiveHistogram {
        let mut at_or_below = [0; LIVE_BOUNDS_NS.len()];
        let mut quantiles_ns = [0; LIVE_QUANTILES.len()];
        let mut sum_ns: u128 = 0;
        if !h.is_empty() {
            for v in h.iter_recorded() {
                let at = v.value_iterated_to();
                let middle = h.median_equivalent(at);
                sum_ns += u128::from(v.count_at_value()) * u128::from(middle);
                // A value at a bound counts below it (HDR keeps it within
                // its bucket, which may reach a little past the bound).
                let lowest = h.lowest_equivalent(at);
                for (i, bound) in LIVE_BOUNDS_NS.iter().enumerate() {
                    if lowest <= *bound {
                        at_or_below[i] += v.count_at_value();
                    }
                }
            }
            for (q, out) in LIVE_QUANTILES.iter().zip(quantiles_ns.iter_mut()) {
                *out = h.value_at_quantile(*q);
            }
        }
        LiveHistogram {
            at_or_below,
            count: h.len(),
            sum_ns,
            quantiles_ns,
        }
    }
}

/// One cell as seen now: the totals of its finished runs and, while it
/// runs, of the run under way. Cells that ran under the same strategy,
/// concurrency and pool size (a `tune` measuring a point again) add up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveCell {
    /// The strategy with its size (`pool:16`).
    pub strategy: String,
    /// Closed-loop workers; for the open loop, the cap on requests in flight.
    pub concurrency: usize,
    pub pool_size: Option<usize>,
    /// `--shard I/N`: I.
    pub shard: Option<usize>,
    /// Running now.
    pub active: bool,
    /// Measured requests completed, successful or not.
    pub requests: u64,
    /// Measured errors by kind (every kind, in report order).
    pub errors: Vec<(String, u64)>,
    /// Open loop: requests sent more than 1 ms after their intended time.
    pub late: u64,
    /// Requests in flight now (0 once the cell ended).
    pub in_flight: u64,
    /// Connections open now (0 once the cell ended).
    pub connections_open: u64,
    /// Connections opened, warm-up included.
    pub connections_opened: u64,
    /// Successful requests' latency (as `CellResult::latency_us`).
    pub latency: LiveHistogram,
    /// Successful requests' checkout wait.
    pub checkout_wait: LiveHistogram,
    /// Open loop: how late each request was sent.
    pub send_lag: LiveHistogram,
    /// How late the generator's hiccup meter woke.
    pub hiccups: LiveHistogram,
}

/// Every cell seen so far, in the order they started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveCounters {
    pub cells: Vec<LiveCell>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::new_histogram;

    #[test]
    fn buckets_are_cumulative_and_the_sum_grows() {
        let mut h = new_histogram();
        for ms in [1u64, 3, 30, 700] {
            h.record(ms * 1_000_000).unwrap();
        }
        let a = LiveHistogram::of(&h);
        assert_eq!(a.count, 4);
        assert_eq!(a.at_or_below[0], 0);
        assert_eq!(a.at_or_below[3], 1, "1 ms at or below 1 ms");
        assert_eq!(a.at_or_below[5], 2);
        assert_eq!(a.at_or_below[8], 3);
        assert_eq!(*a.at_or_below.last().unwrap(), 4);
        assert!(a.at_or_below.windows(2).all(|w| w[0] <= w[1]));
        let sum_ms = a.sum_ns as f64 / 1e6;
        assert!((sum_ms - 734.0).abs() < 1.0, "{sum_ms}");
        h.record(2_000_000).unwrap();
        let b = LiveHistogram::of(&h);
        assert!(b.sum_ns > a.sum_ns && b.count == 5);
        assert!(b.quantiles_ns[3] >= 699_000_000);
    }

    #[test]
    fn an_empty_histogram_is_all_zero() {
        assert_eq!(
            LiveHistogram::of(&new_histogram()),
            LiveHistogram::default()
        );
    }
}
