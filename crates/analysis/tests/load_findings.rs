//! Findings about the load's shape: the closed-loop ceiling, queueing in
//! the pool, the knee, unequal caps, load not achieved, few samples.
use crate::support::{cell, evidence, finding, ids, open_run, quiet, run};
use poolbench_model::{Arrival, LoadModel, RampSummary, RunResult};

#[test]
fn closed_loop_ceiling_from_the_server_counters() {
    // c=10 and a 10 ms server: at most 1000 req/s; at 90% of it counts.
    let at = |rps: f64| {
        run(vec![cell("pool:10", 10)
            .throughput(rps)
            .service_ms(10.0)
            .build()])
    };
    let p = finding(&at(950.0), "closed-loop-ceiling").expect("950 of 1000 is at the ceiling");
    assert_eq!(p.cells, ["pool:10 c=10"]);
    assert_eq!(
        p.evidence,
        ["pool:10 c=10: 950.0 req/s against a ceiling of 1000.0 (c=10 ÷ 10.0 ms mean server time)"]
    );
    assert_eq!(evidence(&at(901.0), "closed-loop-ceiling").len(), 1);
    assert!(evidence(&at(899.0), "closed-loop-ceiling").is_empty());
}

#[test]
fn closed_loop_ceiling_from_the_fastest_request_without_counters() {
    // No server counters: the run's fastest mean request time stands in.
    // pool:4's requests take 4 ms (c=4 at 1000 req/s), so c=8 tops at 2000.
    let r = |rps: f64| {
        run(vec![
            cell("pool:4", 4)
                .throughput(500.0)
                .wait_ms(4.0)
                .no_server()
                .build(),
            cell("pool:8", 8)
                .throughput(rps)
                .latency_ms(4.0)
                .no_server()
                .build(),
        ])
    };
    // pool:4: 4 ms request time, 4 ms waiting: 8 ms in all at 500 req/s.
    let e = evidence(&r(1900.0), "closed-loop-ceiling");
    assert_eq!(
        e,
        ["pool:8 c=8: 1900.0 req/s against a ceiling of 2000.0 (c=8 ÷ 4.0 ms fastest mean request time in this run)"]
    );
    assert!(evidence(&r(1790.0), "closed-loop-ceiling").is_empty());
}

#[test]
fn no_closed_loop_ceiling_in_an_open_loop() {
    let c = cell("pool:10", 10)
        .throughput(990.0)
        .service_ms(10.0)
        .build();
    assert!(finding(&run(vec![c.clone()]), "closed-loop-ceiling").is_some());
    assert!(finding(&open_run(1000.0, vec![c]), "closed-loop-ceiling").is_none());
}

#[test]
fn pool_queueing_needs_more_workers_than_connections_and_a_wait() {
    // 8 workers on 4 connections, 10 ms latency of which 1 ms waiting.
    let r = |c: usize, wait: f64| {
        run(vec![cell("pool:4", c)
            .throughput(c as f64 * 100.0)
            .wait_ms(wait)
            .build()])
    };
    assert_eq!(
        evidence(&r(8, 1.0), "pool-queueing"),
        ["pool:4 c=8: 8 concurrent on 4 connections, 10% of latency waiting for one (1.0 ms of 10.0 ms)"]
    );
    assert!(finding(&r(8, 0.6), "pool-queueing").is_some(), "6% counts");
    assert!(
        finding(&r(8, 0.4), "pool-queueing").is_none(),
        "4% is noise"
    );
    assert!(finding(&r(4, 1.0), "pool-queueing").is_none(), "c=4 on 4");
    // One connection: the singular.
    let shared = run(vec![cell("shared", 2)
        .throughput(200.0)
        .wait_ms(5.0)
        .build()]);
    assert_eq!(
        evidence(&shared, "pool-queueing"),
        ["shared c=2: 2 concurrent on 1 connection, 50% of latency waiting for one (5.0 ms of 10.0 ms)"]
    );
}

#[test]
fn streams_capped_names_the_servers_limit_and_the_connections_that_remove_the_wait() {
    // 100 workers on 2 connections whose server allows 10 streams each.
    let r = |strategy: &str, limit: u64, wait: f64| {
        run(vec![cell(strategy, 100)
            .throughput(5000.0)
            .wait_ms(wait)
            .with(|c| {
                let n = c.connection_cap.unwrap_or(1);
                c.pool.streams_allowed = vec![limit; n];
                c.pool.checkouts = 1000;
                c.pool.waited = 800;
            })
            .build()])
    };
    assert_eq!(
        evidence(&r("round-robin:2", 10, 8.0), "streams-capped"),
        ["round-robin:2 c=100: the server allows 10 streams per connection: 100 in flight on 2 connections run 20 at once; 80% of requests waited for a stream, 40% of latency (8.0 ms of 20.0 ms); 10 connections (⌈100 ÷ 10⌉) remove the wait"]
    );
    // Said once: not again as pool queueing.
    assert!(finding(&r("round-robin:2", 10, 8.0), "pool-queueing").is_none());
    // Enough streams (2 × 64 ≥ 100), no limit (0), or no wait: silent.
    assert!(finding(&r("round-robin:2", 64, 8.0), "streams-capped").is_none());
    assert!(finding(&r("round-robin:2", 0, 8.0), "streams-capped").is_none());
    assert!(finding(&r("round-robin:2", 10, 0.2), "streams-capped").is_none());
    // An exclusive pool waits for a connection, not a stream.
    assert!(finding(&r("pool:2", 10, 8.0), "streams-capped").is_none());
}

#[test]
fn pool_queueing_in_an_open_loop_reads_the_achieved_concurrency() {
    // The cap on in-flight requests (c=100) is not the load: 6 are.
    let r = |achieved: f64| {
        open_run(
            600.0,
            vec![cell("pool:4", 100)
                .throughput(600.0)
                .latency_ms(10.0)
                .wait_ms(2.0)
                .achieved_concurrency(achieved)
                .build()],
        )
    };
    assert_eq!(
        evidence(&r(6.0), "pool-queueing"),
        ["pool:4 c=100: 6 concurrent on 4 connections, 20% of latency waiting for one (2.0 ms of 10.0 ms)"]
    );
    assert!(finding(&r(3.9), "pool-queueing").is_none());
}

/// pool:16 at c=1, 2, 4, 8: throughput doubles to c=4, then grows by
/// `last_gain` while latency doubles (Little's law).
fn knee_grid(last_gain: f64, wait_at_8: f64) -> RunResult {
    let mut cells: Vec<_> = [(1, 100.0), (2, 200.0), (4, 400.0)]
        .into_iter()
        .map(|(c, rps)| quiet("pool:16", c, rps))
        .collect();
    cells.push(
        cell("pool:16", 8)
            .throughput(400.0 * (1.0 + last_gain))
            .wait_ms(wait_at_8)
            .build(),
    );
    run(cells)
}

#[test]
fn the_knee_is_where_throughput_stops_growing_and_latency_grows() {
    let p = finding(&knee_grid(0.025, 0.0), "target-saturated").expect("a knee at c=4");
    assert_eq!(p.cells, ["pool:16 c=4"]);
    assert_eq!(
        p.evidence,
        ["pool:16: throughput stops growing at c=4 (400 req/s, plateau 410); from there to c=8 mean latency 10.0 ms → 19.5 ms"]
    );
    // 5.25% more is still growing.
    assert!(finding(&knee_grid(0.0525, 0.0), "target-saturated").is_none());
}

#[test]
fn no_knee_where_the_latency_is_the_client_pool_queue() {
    // At c=8 the latency is 19.5 ms; 10% of it waiting queues in the
    // client, 9.7% does not.
    assert!(finding(&knee_grid(0.025, 1.9), "target-saturated").is_some());
    assert!(finding(&knee_grid(0.025, 1.96), "target-saturated").is_none());
}

#[test]
fn the_knee_is_a_closed_loop_finding() {
    let mut r = knee_grid(0.0, 0.0);
    assert!(ids(&r).contains(&"target-saturated".to_string()));
    r.config.load = LoadModel::Open {
        rate: 400.0,
        arrival: Arrival::Constant,
    };
    assert!(!ids(&r).contains(&"target-saturated".to_string()));
}

#[test]
fn unequal_caps_compare_caps_not_strategies() {
    let r = run(vec![
        quiet("pool:4", 16, 1000.0),
        quiet("round-robin:8", 16, 1000.0),
    ]);
    let p = finding(&r, "unequal-caps").expect("4 against 8 connections");
    assert_eq!(
        p.evidence,
        ["c=16: connections usable pool:4 4, round-robin:8 8"]
    );
    assert!(p.cells.is_empty(), "a finding about the run, not a cell");
    // Equal caps, or one kind of strategy at several sizes (a size sweep):
    // nothing.
    let equal = run(vec![
        quiet("pool:8", 16, 1000.0),
        quiet("round-robin:8", 16, 1000.0),
    ]);
    assert!(finding(&equal, "unequal-caps").is_none());
    let sweep = run(vec![
        quiet("pool:4", 16, 1000.0),
        quiet("pool:8", 16, 1000.0),
    ]);
    assert!(finding(&sweep, "unequal-caps").is_none());
    // Caps above the workers are not usable: at c=4, 8 and 16 are both 4.
    let above = run(vec![
        quiet("pool:8", 4, 1000.0),
        quiet("round-robin:16", 4, 1000.0),
    ]);
    assert!(finding(&above, "unequal-caps").is_none());
    // A strategy without a cap opens one per worker.
    let uncapped = run(vec![
        quiet("pool:4", 8, 800.0),
        quiet("per-request", 8, 500.0),
    ]);
    assert_eq!(
        evidence(&uncapped, "unequal-caps"),
        ["c=8: connections usable pool:4 4, per-request 8"]
    );
}

#[test]
fn not_achieved_connections_not_all_opened() {
    let r = |peak: u64| {
        run(vec![cell("pool:4", 8)
            .throughput(800.0)
            .peak_open(peak)
            .build()])
    };
    assert_eq!(
        evidence(&r(3), "not-achieved"),
        ["pool:4 c=8: 4 connections asked for, at most 3 open"]
    );
    assert!(finding(&r(4), "not-achieved").is_none());
    // Fewer workers than the cap: the pool need not fill.
    let small = run(vec![cell("pool:4", 2)
        .throughput(200.0)
        .peak_open(2)
        .build()]);
    assert!(finding(&small, "not-achieved").is_none());
    // Take-or-create opens what it needs: no cap to fill.
    let toc = run(vec![cell("take-or-create:4", 8)
        .throughput(800.0)
        .peak_open(3)
        .build()]);
    assert!(finding(&toc, "not-achieved").is_none());
}

#[test]
fn not_achieved_the_server_saw_fewer_connections() {
    let r = |server: u64| {
        run(vec![cell("pool:4", 4)
            .throughput(400.0)
            .server_peak(server)
            .build()])
    };
    assert_eq!(
        evidence(&r(3), "not-achieved"),
        ["pool:4 c=4: client had 4 connections open, the server saw at most 3"]
    );
    assert!(finding(&r(4), "not-achieved").is_none());
}

#[test]
fn not_achieved_a_rate_not_kept() {
    let r = |achieved: f64| {
        let mut c = cell("pool:16", 100)
            .throughput(achieved)
            .latency_ms(5.0)
            .build();
        c.requested_rate = Some(1000.0);
        c.late = 12;
        c.dropped = 3;
        open_run(1000.0, vec![c])
    };
    assert_eq!(
        evidence(&r(940.0), "not-achieved"),
        ["pool:16 c=100: 1000 req/s asked for, 940.0 achieved (12 late, 3 dropped)"]
    );
    assert!(finding(&r(960.0), "not-achieved").is_none());
}

#[test]
fn not_achieved_littles_law_below_the_workers() {
    let r = |n: f64| {
        run(vec![cell("pool:4", 4)
            .throughput(400.0)
            .achieved_concurrency(n)
            .build()])
    };
    assert_eq!(
        evidence(&r(3.5), "not-achieved"),
        ["pool:4 c=4: Little's law gives 3.5 concurrent (throughput × mean latency) against c=4"]
    );
    assert!(finding(&r(3.7), "not-achieved").is_none());
    // An open loop's concurrency is a cap, not a target.
    let open = open_run(
        400.0,
        vec![cell("pool:4", 4)
            .throughput(400.0)
            .achieved_concurrency(1.0)
            .build()],
    );
    assert!(finding(&open, "not-achieved").is_none());
}

#[test]
fn not_achieved_skips_ramped_cells() {
    let mut c = cell("pool:4", 8).throughput(800.0).peak_open(2).build();
    assert!(finding(&run(vec![c.clone()]), "not-achieved").is_some());
    c.ramp = Some(RampSummary {
        seconds: Vec::new(),
        saturated_at: None,
        slo_p99_crossed_at: None,
    });
    assert!(finding(&run(vec![c]), "not-achieved").is_none());
}

#[test]
fn few_samples_below_three_or_with_no_deviation() {
    let r = |n: usize| run(vec![cell("pool:4", 4).throughput(400.0).samples(n).build()]);
    assert_eq!(evidence(&r(2), "few-samples"), ["pool:4 c=4: 2 sample(s)"]);
    assert_eq!(evidence(&r(1), "few-samples"), ["pool:4 c=4: 1 sample(s)"]);
    assert!(finding(&r(3), "few-samples").is_none());
    // Three samples all alike: ±0.00% means nothing either.
    let mut same = quiet("pool:4", 4, 400.0);
    same.throughput_ci95 = Some(0.0);
    assert_eq!(
        evidence(&run(vec![same]), "few-samples"),
        ["pool:4 c=4: 3 sample(s)"]
    );
}
