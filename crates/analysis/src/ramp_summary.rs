//! A ramped cell second by second: the target load, throughput, p99,
//! connections open and checkout wait of each second, where throughput
//! saturated and where p99 crossed the SLO.
use poolbench_model::{decode_histogram, LatencyInterval, Ramp, RampSecond, RampSummary, Timeline};

/// A second's figures from the timeline (100 ms buckets) and the latency
/// intervals.
pub fn summarize(
    ramp: &Ramp,
    t: &Timeline,
    intervals: &[LatencyInterval],
    measured_s: f64,
    slo_p99_us: Option<f64>,
) -> RampSummary {
    let per_second = (1000 / t.bucket_ms.max(1)) as usize;
    let seconds_n = measured_s.ceil() as usize;
    let mut seconds = Vec::with_capacity(seconds_n);
    for s in 0..seconds_n {
        let from = t.measure_from_bucket + s * per_second;
        let to = from + per_second;
        // The buckets of this second a vector has (the last may be short).
        let part = |len: usize| from.min(len)..to.min(len);
        let sum = |v: &[u32]| -> u64 { v[part(v.len())].iter().map(|&n| u64::from(n)).sum() };
        let ok = sum(&t.ok);
        let waits: u64 = t.wait_us[part(t.wait_us.len())].iter().sum();
        // Connections open at the end of the second (the last sample).
        let open = t.open[part(t.open.len())].last().copied().unwrap_or(0);
        let p99_us = intervals
            .iter()
            .find(|i| i.second as usize == s)
            .and_then(|i| decode_histogram(&i.latency_ns).ok())
            .map_or(0.0, |h| h.value_at_quantile(0.99) as f64 / 1000.0);
        let length = (measured_s - s as f64).clamp(1e-3, 1.0);
        seconds.push(RampSecond {
            t_s: s as u32,
            target: ramp.at(s as f64 + length / 2.0),
            throughput_rps: ok as f64 / length,
            errors: sum(&t.errors) as u32,
            p99_us,
            connections_open: open,
            checkout_wait_mean_us: match ok {
                0 => 0.0,
                n => waits as f64 / n as f64,
            },
        });
    }
    let peak = seconds.iter().map(|s| s.throughput_rps).fold(0.0, f64::max);
    let saturated_at = seconds
        .iter()
        .position(|s| peak > 0.0 && s.throughput_rps >= 0.95 * peak)
        .filter(|&i| {
            let here = seconds[i].target;
            seconds[i..].iter().any(|s| s.target > here * 1.1)
        })
        .map(|i| seconds[i].target);
    let slo_p99_crossed_at =
        slo_p99_us.and_then(|bound| seconds.iter().find(|s| s.p99_us > bound).map(|s| s.target));
    RampSummary {
        seconds,
        saturated_at,
        slo_p99_crossed_at,
    }
}
