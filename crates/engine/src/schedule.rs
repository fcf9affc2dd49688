//! The open loop's intended send times: evenly spaced or Poisson, at a
//! fixed rate or one that follows a ramp.
use poolbench_model::{Arrival, Ramp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Intended send times of an open loop.
#[derive(Clone)]
pub(crate) struct Schedule {
    next: Instant,
    gap_s: f64,
    poisson: Option<StdRng>,
    /// A rate that ramps, from the start of the measured window.
    ramp: Option<(Ramp, Instant)>,
}

impl Schedule {
    pub(crate) fn new(start: Instant, rate: f64, arrival: Arrival) -> Self {
        Schedule {
            next: start,
            gap_s: 1.0 / rate,
            poisson: (arrival == Arrival::Poisson).then(|| StdRng::seed_from_u64(0x5eed)),
            ramp: None,
        }
    }

    /// The rate follows `ramp` from `measure_from` on (its start before):
    /// each gap is that of the rate at the time it begins.
    pub(crate) fn ramping(mut self, ramp: Ramp, measure_from: Instant) -> Self {
        self.ramp = Some((ramp, measure_from));
        self
    }

    /// The next intended send time.
    pub(crate) fn next(&mut self) -> Instant {
        let at = self.next;
        let mean = match &self.ramp {
            Some((ramp, from)) => 1.0 / ramp.at(at.saturating_duration_since(*from).as_secs_f64()),
            None => self.gap_s,
        };
        let gap = match &mut self.poisson {
            Some(rng) => -(1.0 - rng.random::<f64>()).ln() * mean,
            None => mean,
        };
        self.next += Duration::from_secs_f64(gap);
        at
    }
}

/// One load thread's share of a schedule: of the whole schedule's intended
/// times (numbered from 0), those whose number is `k` modulo `n`. The `n`
/// shares together send exactly the whole schedule, each time once: with
/// even spacing each thread sends every `n`-th request at `n` times the
/// gap; a Poisson schedule is drawn whole on every thread (the same seed)
/// and dealt, so the arrivals of all threads together are Poisson at the
/// rate asked.
pub(crate) struct Share {
    whole: Schedule,
    k: usize,
    n: usize,
    seq: usize,
}

impl Share {
    pub(crate) fn new(whole: Schedule, k: usize, n: usize) -> Share {
        let n = n.max(1);
        Share {
            whole,
            k: k % n,
            n,
            seq: 0,
        }
    }

    /// The next intended time of this share, and its number in the whole
    /// schedule.
    pub(crate) fn next(&mut self) -> (usize, Instant) {
        loop {
            let (seq, at) = (self.seq, self.whole.next());
            self.seq = self.seq.wrapping_add(1);
            if seq % self.n == self.k {
                return (seq, at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first `count` times of the whole schedule, and of `n` shares
    /// of it merged, numbered as the shares number them.
    fn whole_and_shares(whole: &Schedule, n: usize, count: usize) -> (Vec<Instant>, Vec<Instant>) {
        let mut one = whole.clone();
        let expected: Vec<Instant> = (0..count).map(|_| one.next()).collect();
        let mut merged = vec![None; count];
        for k in 0..n {
            let mut share = Share::new(whole.clone(), k, n);
            let mut last = None;
            loop {
                let (seq, at) = share.next();
                if seq >= count {
                    break;
                }
                assert_eq!(seq % n, k, "share {k} of {n} sent number {seq}");
                assert!(last < Some(at), "share {k} of {n}: times out of order");
                assert!(merged[seq].replace(at).is_none(), "number {seq} sent twice");
                last = Some(at);
            }
        }
        let merged = merged
            .into_iter()
            .map(|t| t.expect("every number sent"))
            .collect();
        (expected, merged)
    }

    #[test]
    fn shares_together_send_exactly_the_whole_schedule() {
        let t0 = Instant::now();
        let ramp = Ramp::parse("100..5000/2s").unwrap();
        let schedules = [
            Schedule::new(t0, 50_000.0, Arrival::Constant),
            Schedule::new(t0, 30_000.0, Arrival::Poisson),
            Schedule::new(t0, 1_000.0, Arrival::Constant).ramping(ramp, t0),
        ];
        for whole in &schedules {
            for n in [1, 2, 3, 8] {
                let (expected, merged) = whole_and_shares(whole, n, 10_000);
                assert_eq!(merged, expected, "{n} shares");
            }
        }
    }

    #[test]
    fn an_even_share_is_every_nth_time_at_n_gaps() {
        let t0 = Instant::now();
        let mut share = Share::new(Schedule::new(t0, 100_000.0, Arrival::Constant), 1, 2);
        let times: Vec<Instant> = (0..100_000).map(|_| share.next().1).collect();
        let us = |t: Instant| (t - t0).as_secs_f64() * 1e6;
        assert!((us(times[0]) - 10.0).abs() < 0.01, "{}", us(times[0]));
        // 100,000 a second over 2 shares: this one sends 50,000 a second.
        let last = us(times[99_999]);
        // (Each gap is rounded to the nanosecond: 0.01% at most.)
        let planned = 10.0 + 99_999.0 * 20.0;
        assert!((last - planned).abs() < planned * 1e-4, "{last}");
    }

    #[test]
    fn poisson_shares_sum_to_the_rate() {
        let t0 = Instant::now();
        let whole = Schedule::new(t0, 20_000.0, Arrival::Poisson);
        let one_second = t0 + Duration::from_secs(1);
        let sent: usize = (0..4)
            .map(|k| {
                let mut share = Share::new(whole.clone(), k, 4);
                std::iter::from_fn(|| Some(share.next().1))
                    .take_while(|at| *at < one_second)
                    .count()
            })
            .sum();
        // Poisson at 20,000 a second: a standard deviation is 141.
        assert!((sent as f64 - 20_000.0).abs() < 425.0, "{sent}");
    }
}
