//! `pool-bound` on both sides of its thresholds; the recommendation that
//! refuses a pool-bound cell at the largest pool tried; the USL fitted on
//! uncapped cells only.
use crate::support::{cell, evidence, open_run, quiet, run};
use poolbench_analysis::{analyze, usl_fits};
use poolbench_model::CellResult;

/// `strategy` at c=`c`, `rps` req/s, each request `request_ms` once it has
/// a connection, `latency_ms` in all (the rest waiting for one).
fn waiting(strategy: &str, c: usize, rps: f64, request_ms: f64, latency_ms: f64) -> CellResult {
    cell(strategy, c)
        .throughput(rps)
        .latency_ms(latency_ms)
        .wait_ms(latency_ms - request_ms)
        .build()
}

#[test]
fn throughput_at_pool_size_over_request_time_with_workers_waiting_is_pool_bound() {
    // 16 ÷ 52.8 ms = 303 req/s; 100 workers: 330 ms each, 84% waiting.
    let lines = evidence(
        &run(vec![waiting("pool:16", 100, 303.0, 52.8, 330.0)]),
        "pool-bound",
    );
    assert_eq!(
        lines,
        [
            "pool:16 c=100: 303 req/s ≈ 16 connections ÷ 52.8 ms per request; 84% of latency \
          waiting for a connection: the pool, not the service, set the throughput; a larger \
          pool would serve more"
        ]
    );
    // Within 15% either way.
    let r = run(vec![
        waiting("pool:16", 100, 265.0, 52.8, 330.0),
        waiting("elastic:12+4", 100, 345.0, 52.8, 330.0),
    ]);
    assert_eq!(evidence(&r, "pool-bound").len(), 2);
}

#[test]
fn not_pool_bound_off_the_line_without_waits_or_with_connections_to_spare() {
    let none = |cells: Vec<CellResult>| evidence(&run(cells), "pool-bound").is_empty();
    // Throughput 21% under 16 ÷ 52.8 ms: something else held it.
    assert!(none(vec![waiting("pool:16", 100, 240.0, 52.8, 330.0)]));
    // Above it by 20%: the request time is not what the pool serves at.
    assert!(none(vec![waiting("pool:16", 100, 364.0, 52.8, 330.0)]));
    // On the line, but a fifth of the latency waiting: barely over the pool.
    assert!(none(vec![waiting("pool:16", 20, 303.0, 52.8, 66.0)]));
    // As many connections as workers.
    assert!(none(vec![waiting("pool:16", 16, 303.0, 52.8, 330.0)]));
    // A multiplexed strategy: its connections carry many requests at once.
    assert!(none(vec![waiting(
        "round-robin:16",
        100,
        303.0,
        52.8,
        330.0
    )]));
    // No cap.
    assert!(none(vec![waiting(
        "take-or-create:16",
        100,
        303.0,
        52.8,
        330.0
    )]));
    // An open loop: no workers to wait.
    let open = open_run(303.0, vec![waiting("pool:16", 100, 303.0, 52.8, 330.0)]);
    assert!(evidence(&open, "pool-bound").is_empty());
}

/// c=100 over pools of 4, 8 and 16 connections, each pool-bound at 52.8 ms
/// per request.
fn bound_grid() -> Vec<CellResult> {
    [4, 8, 16]
        .into_iter()
        .map(|n| {
            let rps = n as f64 / 0.0528;
            waiting(&format!("pool:{n}"), 100, rps, 52.8, 100_000.0 / rps)
        })
        .collect()
}

#[test]
fn no_recommendation_when_the_largest_pool_tried_was_the_bottleneck() {
    let mut r = run(bound_grid());
    analyze(&mut r);
    assert_eq!(r.recommendation, None);
    assert_eq!(
        r.reason.as_deref(),
        Some(
            "the best cell had the largest pool tried (pool:16) and the pool was the \
             bottleneck; raise --pool (or run poolbench tune)"
        )
    );
    // A larger pool tried, where the service held throughput at 310 req/s
    // (32 ÷ 72 ms would be 444): pool:16 is within 5% of it, and the
    // answer.
    let mut cells = bound_grid();
    cells.push(waiting("pool:32", 100, 310.0, 72.0, 322.0));
    let mut r = run(cells);
    analyze(&mut r);
    let rec = r.recommendation.expect("pool:16 is not the largest tried");
    assert_eq!((rec.strategy.as_str(), rec.concurrency), ("pool:16", 100));
}

/// `strategy` at the levels 1 to 64: below `cap` workers, throughput on
/// the law X(N) = 500N / (1 + 0.03(N−1) + 0.0005N(N−1)); from `cap` on,
/// flat at X(cap) with the workers beyond the pool waiting.
fn capped_curve(strategy: &str, cap: usize) -> Vec<CellResult> {
    let law = |n: f64| 500.0 * n / (1.0 + 0.03 * (n - 1.0) + 0.0005 * n * (n - 1.0));
    [1, 2, 4, 8, 16, 32, 64]
        .into_iter()
        .map(|c| match c <= cap {
            true => quiet(strategy, c, law(c as f64)),
            false => {
                let rps = law(cap as f64);
                let latency = c as f64 / rps * 1000.0;
                let request = cap as f64 / rps * 1000.0;
                waiting(strategy, c, rps, request, latency)
            }
        })
        .collect()
}

#[test]
fn the_usl_is_fitted_only_where_connections_were_not_the_cap() {
    // pool:8 is capped from c=16 on: the fit reads c = 1 to 8 and finds
    // the law, not the pool's plateau.
    let fits = usl_fits(&run(capped_curve("pool:8", 8)));
    assert_eq!(fits.len(), 1);
    let u = &fits[0];
    assert!((u.sigma - 0.03).abs() < 1e-6, "{u:?}");
    assert!((u.kappa - 0.0005).abs() < 1e-8, "{u:?}");
    // pool:4 leaves three uncapped levels: too few for a fit.
    assert!(usl_fits(&run(capped_curve("pool:4", 4))).is_empty());
    // Without a cap (per-request), or multiplexed with streams to spare
    // (no wait), every level counts.
    let mut cells = capped_curve("per-request", 64);
    cells.extend(capped_curve("round-robin:4", 64));
    let fits = usl_fits(&run(cells));
    let names: Vec<&str> = fits.iter().map(|u| u.strategy.as_str()).collect();
    assert_eq!(names, ["per-request", "round-robin:4"]);
    // Multiplexed, but waiting for a stream from c=16 on: capped there.
    let u = usl_fits(&run(capped_curve("shared", 8))).remove(0);
    assert!((u.kappa - 0.0005).abs() < 1e-8, "{u:?}");
}
