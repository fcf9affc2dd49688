//! Merging the results of several processes: counts and throughput add,
//! histograms add exactly, then the whole is analyzed again.
use crate::support::base;
use poolbench_analysis::{analyze, merge};
use poolbench_model::findings::Id;
use poolbench_model::{decode_histogram, Summary};
use std::time::Duration;

#[test]
fn two_copies_double_the_counts_and_keep_the_histograms_exact() {
    let one = base();
    let merged = merge(&[one.clone(), one.clone()]).expect("the same plan");
    let (a, m) = (&one.cells[0], &merged.cells[0]);
    assert_eq!(m.label(), a.label());
    assert_eq!(m.throughput_rps, 2.0 * a.throughput_rps);
    assert_eq!(m.achieved_rate, 2.0 * a.achieved_rate);
    assert_eq!((m.ok, m.requests), (2 * a.ok, 2 * a.requests));
    assert_eq!(m.errors.total, 2 * a.errors.total);
    assert_eq!(m.connections.opened, 2 * a.connections.opened);
    assert_eq!(m.connections.peak_open, 2 * a.connections.peak_open);
    // Per repetition, throughputs add and the worse p99 stands.
    for (s, t) in m.samples.iter().zip(&a.samples) {
        assert_eq!(s.throughput_rps, 2.0 * t.throughput_rps);
        assert_eq!(s.p99_us, t.p99_us);
    }
    // Each histogram is the exact sum: twice the count, the same
    // distribution, and its summary is the sum's.
    let pairs = [
        (
            &a.histograms.latency_ns,
            &m.histograms.latency_ns,
            m.latency_us,
        ),
        (
            &a.histograms.checkout_wait_ns,
            &m.histograms.checkout_wait_ns,
            m.checkout_wait_us,
        ),
        (
            &a.histograms.request_ns,
            &m.histograms.request_ns,
            m.request_us,
        ),
        (
            &a.histograms.connect_ns,
            &m.histograms.connect_ns,
            m.connect_us,
        ),
    ];
    for (before, after, summary) in pairs {
        let (h1, h2) = (
            decode_histogram(before).unwrap(),
            decode_histogram(after).unwrap(),
        );
        assert_eq!(h2.len(), 2 * h1.len());
        assert_eq!(h2.max(), h1.max());
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(h2.value_at_quantile(q), h1.value_at_quantile(q), "q={q}");
        }
        assert_eq!(summary, Summary::of(&h2));
    }
    assert_eq!(m.latency_us.count, 2 * a.latency_us.count);
    assert_eq!(m.latency_us.p99, a.latency_us.p99);
    // The timelines add bucket by bucket (both started at one instant).
    let doubled: Vec<u32> = a.timeline.ok.iter().map(|n| 2 * n).collect();
    assert_eq!(m.timeline.ok, doubled);
    // The server's own counters are one process's: dropped.
    assert_eq!(m.server, None);
    assert_eq!(merged.server, None);
}

#[test]
fn the_merge_is_analyzed_as_one_run() {
    let merged = merge(&[base(), base(), base()]).expect("the same plan");
    let mut again = merged.clone();
    analyze(&mut again);
    assert_eq!(
        serde_json::to_string(&again).unwrap(),
        serde_json::to_string(&merged).unwrap()
    );
    assert_eq!(
        merged.cells[0].throughput_rps,
        3.0 * base().cells[0].throughput_rps
    );
    assert!(merged.findings.iter().any(|p| p.id == Id::FewSamples));
}

#[test]
fn timelines_are_aligned_on_the_wall_clock() {
    // The second process started 0.3 s later: its buckets go 3 later.
    let one = base();
    let mut later = one.clone();
    later.cells[0].started_unix_s = one.cells[0].started_unix_s.map(|s| s + 0.3);
    let m = merge(&[one.clone(), later]).expect("the same plan");
    let t = &one.cells[0].timeline.ok;
    let mut expect = t.clone();
    expect.resize(t.len() + 3, 0);
    for (i, n) in t.iter().enumerate() {
        expect[i + 3] += n;
    }
    assert_eq!(m.cells[0].timeline.ok, expect);
    assert_eq!(m.cells[0].timeline.measure_from_bucket, 3);
}

#[test]
fn results_of_different_plans_do_not_merge() {
    let one = base();
    let mut other = one.clone();
    other.config.duration = Duration::from_secs(2);
    assert_eq!(
        merge(&[one.clone(), other]).unwrap_err(),
        "result 2 was run with another plan (differs in: duration)"
    );
    let mut fewer = one.clone();
    fewer.cells.clear();
    assert_eq!(
        merge(&[one.clone(), fewer]).unwrap_err(),
        "result 2 has 0 cells, the first 1"
    );
    let mut renamed = one.clone();
    renamed.cells[0].strategy = "pool:5".into();
    assert_eq!(
        merge(&[one.clone(), renamed]).unwrap_err(),
        "cells differ: pool:4 c=4 against pool:5 c=4"
    );
    assert_eq!(merge(&[]).unwrap_err(), "nothing to merge");
}
