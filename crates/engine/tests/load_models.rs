//! Open loop, coordinated omission, batch samples, recommendation.
use crate::common::*;
use poolbench_model::{Arrival, LoadModel, PlanError};
use poolbench_server::ServerConfig;
use std::time::Duration;

fn open(rate: f64) -> LoadModel {
    LoadModel::Open {
        rate,
        arrival: Arrival::Constant,
    }
}

#[test]
fn open_loop_achieves_its_rate() {
    let result = quick_run(delay("5ms"), "pool:10", &[100], |p| {
        p.load = open(200.0);
        p.duration = Duration::from_secs(5);
        p.warmup = Duration::from_millis(500);
    });
    let c = &result.cells[0];
    assert!(
        within(c.achieved_rate, 200.0, 0.05),
        "achieved {} req/s",
        c.achieved_rate
    );
    assert!(within(c.throughput_rps, 200.0, 0.05));
    assert_eq!(c.requested_rate, Some(200.0));
    assert_eq!(c.model, "open");
    assert!(c.latency_uncorrected_us.is_some());
}

#[test]
fn load_threads_sharing_the_schedule_send_every_request() {
    // 5,000 req/s dealt over three load threads: a share sent twice or
    // skipped shows as a rate a third off, a late sender as send lag. A
    // machine busy with other work makes a sender late and then catch up
    // in a burst that lands inside the window (5,331 req/s seen beside
    // the other test lanes), so the bound is a tenth, well short of a third.
    let result = quick_run(delay("0ms"), "pool:20", &[1000], |p| {
        p.load = open(5_000.0);
        p.threads = 3;
        p.duration = Duration::from_secs(2);
        p.warmup = Duration::from_millis(300);
    });
    let c = &result.cells[0];
    assert!(
        within(c.achieved_rate, 5_000.0, 0.1),
        "achieved {} req/s",
        c.achieved_rate
    );
    assert_eq!(c.errors.total, 0, "{:?}", c.errors);
    assert_eq!(c.dropped, 0);
    let lag = c.send_lag_us.as_ref().expect("an open loop's send lag");
    // Under 1 ms on a quiet machine; 1.5 ms seen on this one running its
    // other tests. A sender that lost its share lags by its whole period.
    assert!(lag.p50 < 5_000.0, "send lag p50 {} µs", lag.p50);
}

#[test]
fn poisson_arrivals_average_the_rate() {
    let result = quick_run(delay("2ms"), "pool:10", &[100], |p| {
        p.load = LoadModel::Open {
            rate: 300.0,
            arrival: Arrival::Poisson,
        };
        p.duration = Duration::from_secs(3);
    });
    let c = &result.cells[0];
    assert!(
        within(c.achieved_rate, 300.0, 0.15),
        "achieved {} req/s",
        c.achieved_rate
    );
}

#[test]
fn coordinated_omission_is_corrected() {
    // The whole server freezes for 1 s in every 5 s: requests queued
    // behind the freeze wait, which only the corrected latency shows.
    let stalling = ServerConfig {
        stall: Duration::from_secs(1),
        stall_every: Duration::from_secs(5),
        ..delay("2ms")
    };
    // The server starts frozen, so the run begins about 1 s in and the
    // next freeze, at 5 s, falls well inside its 6 s.
    let result = quick_run(stalling, "pool:4", &[1000], |p| {
        p.load = open(200.0);
        p.warmup = Duration::ZERO;
        p.duration = Duration::from_secs(6);
    });
    let c = &result.cells[0];
    let corrected = c.latency_us.p99;
    let uncorrected = c.latency_uncorrected_us.unwrap().p99;
    assert!(corrected > 500_000.0, "corrected p99 {corrected} µs");
    assert!(
        corrected > 5.0 * uncorrected,
        "corrected {corrected} µs, uncorrected {uncorrected} µs"
    );
}

#[test]
fn batch_samples_meet_the_minimum_outside_the_warmup() {
    let result = quick_run(delay("1ms"), "pool:4", &[4], |p| {
        p.load = LoadModel::Batch {
            size: 40,
            samples: 6,
        };
        p.duration = Duration::from_millis(10);
    });
    let c = &result.cells[0];
    assert_eq!(c.model, "batch");
    assert!(c.samples.len() >= 6, "{} samples", c.samples.len());
    assert_eq!(c.requests, 40 * c.samples.len() as u64);
    assert!(
        c.warmup_requests > 0,
        "the warm-up ran, outside the samples"
    );
    assert!(c.throughput_ci95.is_some());
}

#[test]
fn reps_give_fresh_connections_and_a_confidence_interval() {
    // Random service times, so the runs' throughputs differ: with a fixed
    // 2 ms on tokio's millisecond timer, three runs of three workers could
    // complete exactly as many requests each, and a half-width of 0 is then
    // the right answer.
    let (server, mut plan) = quick(delay("uniform(1ms,3ms)"), "pool:3", &[3]);
    plan.reps = 3;
    plan.duration = Duration::from_millis(400);
    let result = run_with(&server, &plan);
    let c = &result.cells[0];
    assert_eq!(c.reps, 3);
    assert_eq!(c.samples.len(), 3, "one sample per run");
    assert_eq!(c.connections.opened, 9, "3 connections per run");
    assert_eq!(c.server.unwrap().connections_accepted, 9);
    let ci = c.throughput_ci95.unwrap();
    let differ = c
        .samples
        .windows(2)
        .any(|w| w[0].throughput_rps != w[1].throughput_rps);
    assert_eq!(ci > 0.0, differ, "ci {ci} for samples {:?}", c.samples);
    assert!(ci < c.throughput_rps, "ci {ci}");
}

#[test]
fn recommendation_stops_where_the_server_limits() {
    let limited = ServerConfig {
        max_inflight: Some(16),
        ..delay("20ms")
    };
    let result = quick_run(limited, "pool", &[64], |p| {
        p.pool_sizes = vec![8, 16, 32, 64];
        p.duration = Duration::from_secs(2);
        p.warmup = Duration::from_millis(300);
    });
    let r = result.recommendation.expect("a recommendation");
    let size = r.pool_size.unwrap();
    assert!((16..=32).contains(&size), "recommended {r:?}");
    assert!(r.why.contains("c=64"), "{}", r.why);
}

#[test]
fn an_uncapped_recommendation_says_how_many_connections_it_may_open() {
    // take-or-create:2 opens one connection per worker (4), pool:2 queues
    // half of them behind a 5 ms server: the first wins, and its size (2)
    // must not read as its connection count.
    let result = quick_run(delay("5ms"), "pool:2,take-or-create:2", &[4], |p| {
        p.duration = Duration::from_millis(600);
    });
    let r = result.recommendation.expect("a recommendation");
    assert_eq!(r.strategy, "take-or-create:2", "{r:?}");
    assert!(
        r.why
            .contains("(no cap: up to 4, one per worker; 4 open at peak)"),
        "{}",
        r.why
    );
}

#[test]
fn bad_load_settings_are_plan_errors() {
    let (_server, mut plan) = quick(ServerConfig::default(), "pool:2", &[2]);
    plan.load = open(0.0);
    assert_eq!(plan.validate(), Err(PlanError::ZeroRate));
    plan.load = LoadModel::Closed;
    plan.reps = 0;
    assert_eq!(plan.validate(), Err(PlanError::ZeroReps));
    plan.reps = 1;
    plan.load = LoadModel::Batch {
        size: 100,
        samples: 5,
    };
    plan.requests = Some(300);
    assert!(matches!(
        plan.validate(),
        Err(PlanError::SamplesOverBudget { .. })
    ));
}
