//! The open loop measures the target, not itself: far below the target's
//! capacity, requests do not wait for connections and their latency is the
//! server's; the pacer's own error (send lag) is reported.
use crate::common::*;
use poolbench_model::{Arrival, CellResult, LoadModel};
use std::time::Duration;

/// What the machine did meanwhile, for a failure's message: the
/// generator's own hiccups and the CPU.
fn machine(c: &CellResult) -> String {
    format!(
        "hiccups p50 {} p90 {} p99 {} µs, poolbench {:?} of the cores, machine {:?} busy",
        c.generator_hiccups_us.p50,
        c.generator_hiccups_us.p90,
        c.generator_hiccups_us.p99,
        c.generator_cpu,
        c.machine_cpu
    )
}

/// What the machine itself took from the generator, as its hiccup meter
/// saw it (p99), allowed on top of a latency bound: about 0.1 ms on a quiet
/// machine, so the bounds stay as strict there, and a few ms when the shared
/// host stalls every process, this test's server too (CI once saw hiccups
/// p90 1.7 ms, p99 6.8 ms and the 1 ms server's mean 2.2 ms). Capped at
/// 10 ms: the engine's own stalls that these tests guard against were a
/// second long, and one that starved the meter must not excuse itself.
fn stalls_us(c: &CellResult) -> f64 {
    c.generator_hiccups_us.p99.min(10_000.0)
}

/// The share of the hiccup meter's wake-ups more than 1 ms late: what the
/// machine alone made late while the pacer ran (its `late` is a send more
/// than 1 ms behind).
fn machine_late_share(c: &CellResult) -> f64 {
    let h = poolbench_model::decode_histogram(&c.histograms.generator_hiccups_ns)
        .expect("the hiccup histogram decodes");
    1.0 - h.percentile_below(1_000_000) / 100.0
}

fn open_cell(pool: &str, rate: f64, max_inflight: usize) -> CellResult {
    let result = quick_run(delay("1ms"), pool, &[max_inflight], |p| {
        p.load = LoadModel::Open {
            rate,
            arrival: Arrival::Constant,
        };
        p.warmup = Duration::from_millis(500);
        p.duration = Duration::from_secs(3);
    });
    result.cells[0].clone()
}

/// 3,000 req/s at a 1 ms server needs about 3 connections of the 1,000, with
/// an in-flight cap of 10,000. The engine once ran one sender per in-flight
/// slot, each with its own growing histograms: page zeroing stalled the
/// load threads, and checkout waits reached a second (1.07 s p99 here).
#[test]
fn far_below_capacity_nothing_waits_and_latency_is_the_servers() {
    let c = open_cell("pool:1000", 3000.0, 10_000);
    let service_us = c
        .server
        .and_then(|s| s.mean_service_us())
        .expect("the built-in server reports its service time");
    // What the open loop must not add is a systematic wait: the median and
    // p90 are held close to the server's time. The p99 of a 3 s window at
    // 3,000 req/s is moved by a single 30 ms descheduling of this shared
    // 2-core machine (90 requests arrive in it), as CI once saw (15 ms p99,
    // 2.3 ms on a quiet machine), so it is only held far below the stall this
    // guards against (1.07 s).
    assert!(
        c.checkout_wait_us.p90 < 1_000.0,
        "checkout wait p90 {} µs with ~3 of 1,000 connections needed",
        c.checkout_wait_us.p90
    );
    assert!(
        c.checkout_wait_us.p99 < 50_000.0,
        "checkout wait p99 {} µs",
        c.checkout_wait_us.p99
    );
    let uncorrected = c.latency_uncorrected_us.unwrap();
    let stalls = stalls_us(&c);
    assert!(
        uncorrected.p50 < service_us + 1_500.0 + stalls
            && uncorrected.p90 < service_us + 3_000.0 + stalls,
        "uncorrected p50 {} p90 {} µs, server time {service_us} µs; {}",
        uncorrected.p50,
        uncorrected.p90,
        machine(&c)
    );
    for (name, p99) in [
        ("uncorrected", uncorrected.p99),
        ("corrected", c.latency_us.p99),
    ] {
        assert!(
            p99 < service_us + 100_000.0,
            "{name} p99 {p99} µs, server time {service_us} µs"
        );
    }
    assert!(
        within(c.achieved_rate, 3000.0, 0.05),
        "achieved {}",
        c.achieved_rate
    );
    // Senders are not parked ahead of time: connections follow the need
    // (the old engine opened the whole pool at once). A stall of the shared
    // machine queues requests and opens connections: 33 ms at 3,000 req/s
    // fills 100 (CI saw all 100 of a pool:100 open once), so the pool is
    // 1,000 and only a third of a second's stall would fill half of it.
    assert!(
        c.connections.peak_open < 500,
        "{} connections open at peak",
        c.connections.peak_open
    );
}

#[test]
fn the_pacers_send_lag_is_reported() {
    let c = open_cell("pool:100", 2000.0, 1000);
    let lag = c
        .send_lag_us
        .expect("open-loop cells report their send lag");
    assert_eq!(lag.count, c.requests, "one send lag per measured request");
    assert!(lag.p50 > 0.0 && lag.p50 <= lag.p99 && lag.p99 <= lag.max);
    // The benchmark holds it to 50 µs (bench/vs-vegeta.sh); a test on a
    // shared machine only to well below the old 1 ms timer's error.
    assert!(
        lag.p50 < 500.0,
        "send lag p50 {} µs; {}",
        lag.p50,
        machine(&c)
    );
    // Late is more than 1 ms behind. One 150 ms descheduling of this shared
    // machine makes 300 of 6,000 late (CI saw 306); the old timer made most
    // of them late. So: nine in ten on time, and late ones a small share,
    // beyond what the machine's own stalls account for (on a host whose
    // idle vCPUs woke 1 ms late at p90, one run here saw 1,388 of 5,996).
    assert!(
        lag.p90 < 1000.0 + stalls_us(&c),
        "send lag p90 {} µs; {}",
        lag.p90,
        machine(&c)
    );
    // On top of that, the share the machine made late by itself.
    let machine_late = machine_late_share(&c);
    assert!(
        (c.late as f64) < (0.2 + machine_late) * c.requests as f64,
        "{} of {} late, {:.1}% of the meter's wake-ups over 1 ms late; {}",
        c.late,
        c.requests,
        machine_late * 100.0,
        machine(&c)
    );
    assert!(c.generator_hiccups_us.count > 1000, "the meter ran");
    let h = &c.histograms;
    assert!(!h.send_lag_ns.is_empty() && !h.generator_hiccups_ns.is_empty());
}
