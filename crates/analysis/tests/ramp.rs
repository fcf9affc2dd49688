//! A ramped cell summarized second by second.
use crate::support::{cell, run};
use poolbench_analysis::{analyze, summarize_ramp};
use poolbench_model::{encode_histogram, new_histogram, LatencyInterval, Ramp, Timeline};

/// Three seconds of 100 ms buckets: `per_second[s]` successes in each
/// bucket of second s; connections open and waits alongside.
fn timeline(per_second: &[u32]) -> Timeline {
    let ok: Vec<u32> = per_second.iter().flat_map(|&n| [n; 10]).collect();
    let len = ok.len();
    Timeline {
        bucket_ms: 100,
        measure_from_bucket: 0,
        errors: vec![0; len],
        inflight: vec![4; len],
        open: (0..len as u32).map(|i| 1 + i / 10).collect(),
        wait_us: ok.iter().map(|&n| u64::from(n) * 50).collect(),
        ok,
    }
}

/// One second's latencies: `n` at `ms`.
fn interval(second: u32, ms: u64) -> LatencyInterval {
    let mut h = new_histogram();
    h.record_n(ms * 1_000_000, 100).unwrap();
    LatencyInterval {
        second,
        start_unix_s: 1.0e9 + f64::from(second),
        duration_s: 1.0,
        latency_ns: encode_histogram(&h),
    }
}

#[test]
fn each_second_and_where_throughput_saturated() {
    let ramp = Ramp::parse("10..30/3s").unwrap();
    let intervals = [interval(0, 5), interval(1, 8), interval(2, 40)];
    let s = summarize_ramp(
        &ramp,
        &timeline(&[10, 20, 20]),
        &intervals,
        3.0,
        Some(30_000.0),
    );
    let tps: Vec<f64> = s.seconds.iter().map(|x| x.throughput_rps).collect();
    assert_eq!(tps, [100.0, 200.0, 200.0]);
    // Targets at each second's middle: 10 + 20 × (s + 0.5)/3.
    let targets: Vec<f64> = s.seconds.iter().map(|x| x.target).collect();
    for (t, want) in targets.iter().zip([13.333, 20.0, 26.667]) {
        assert!((t - want).abs() < 1e-3, "{targets:?}");
    }
    let open: Vec<u32> = s.seconds.iter().map(|x| x.connections_open).collect();
    assert_eq!(open, [1, 2, 3]);
    assert!(s
        .seconds
        .iter()
        .all(|x| (x.checkout_wait_mean_us - 50.0).abs() < 1e-9));
    let p99: Vec<f64> = s
        .seconds
        .iter()
        .map(|x| (x.p99_us / 1000.0).round())
        .collect();
    assert_eq!(p99, [5.0, 8.0, 40.0]);
    // Throughput reached its peak at second 1 (target 20) while the
    // target still grew by more than 10%.
    assert_eq!(s.saturated_at, Some(20.0));
    // p99 crossed 30 ms in second 2.
    assert!((s.slo_p99_crossed_at.unwrap() - 26.667).abs() < 1e-3);
}

#[test]
fn still_growing_at_the_end_is_not_saturated() {
    let ramp = Ramp::parse("10..30/3s").unwrap();
    let s = summarize_ramp(&ramp, &timeline(&[10, 20, 30]), &[], 3.0, None);
    assert_eq!(s.saturated_at, None);
    assert_eq!(s.slo_p99_crossed_at, None);
    assert!(s.seconds.iter().all(|x| x.p99_us == 0.0));
}

#[test]
fn analyze_summarizes_ramped_cells() {
    let mut c = cell("pool:32", 30).throughput(500.0).build();
    c.timeline = timeline(&[10, 20, 20]);
    c.duration_s = 3.0;
    c.reps = 1;
    let mut r = run(vec![c]);
    r.config.ramp = Some(Ramp::parse("10..30/3s").unwrap());
    analyze(&mut r);
    let summary = r.cells[0].ramp.as_ref().expect("a ramp summary");
    assert_eq!(summary.seconds.len(), 3);
    assert_eq!(summary.saturated_at, Some(20.0));
}
