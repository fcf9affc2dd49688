//! The recommendation: the smallest cap within 5% of the peak throughput
//! and 20% of the best p99 at the highest concurrency, and each reason to
//! refuse one.
use crate::support::{cell, quiet, run, run_with_slo, CellBuilder};
use poolbench_analysis::{analyze, recommend};
use poolbench_model::{CellResult, RunResult};

/// c=16 cells (never chosen: not the highest level) and c=32 cells of
/// pool sizes 4 to 32; pool:8's throughput and p99 are the variables.
fn grid(pool8: CellBuilder) -> Vec<CellResult> {
    vec![
        quiet("pool:4", 16, 500.0),
        quiet("pool:16", 16, 600.0),
        cell("pool:4", 32).throughput(900.0).p99_ms(60.0).build(),
        pool8.build(),
        cell("pool:16", 32).throughput(1000.0).p99_ms(40.0).build(),
        cell("pool:32", 32).throughput(1000.0).p99_ms(41.0).build(),
    ]
}

fn pool8(rps: f64, p99_ms: f64) -> CellBuilder {
    cell("pool:8", 32).throughput(rps).p99_ms(p99_ms)
}

fn analyzed(mut r: RunResult) -> RunResult {
    analyze(&mut r);
    r
}

fn picked(r: RunResult) -> (String, usize) {
    let r = analyzed(r);
    let rec = r
        .recommendation
        .unwrap_or_else(|| panic!("no recommendation: {:?}", r.reason));
    (rec.strategy, rec.concurrency)
}

#[test]
fn the_smallest_cap_within_5_percent_of_the_peak_and_20_percent_of_the_best_p99() {
    let r = analyzed(run(grid(pool8(960.0, 45.0))));
    let rec = r.recommendation.expect("pool:8 qualifies");
    assert_eq!(
        (rec.strategy.as_str(), rec.pool_size, rec.concurrency),
        ("pool:8", Some(8), 32)
    );
    assert_eq!(
        rec.why,
        "at c=32, the fewest connections (8) within 5% of the peak throughput (960 of 1000 req/s) \
         and 20% of the best p99 (45.0 ms against 40.0 ms)"
    );
    // Just outside either bound, the next size up.
    assert_eq!(picked(run(grid(pool8(949.0, 45.0)))).0, "pool:16");
    assert_eq!(picked(run(grid(pool8(960.0, 48.1)))).0, "pool:16");
    assert_eq!(picked(run(grid(pool8(950.0, 48.0)))).0, "pool:8");
}

#[test]
fn between_equal_caps_the_higher_throughput() {
    let r = run(vec![
        cell("pool:8", 32).throughput(960.0).build(),
        cell("round-robin:8", 32).throughput(980.0).build(),
        cell("pool:16", 32).throughput(1000.0).build(),
    ]);
    assert_eq!(picked(r).0, "round-robin:8");
}

#[test]
fn an_uncapped_strategy_says_how_many_it_opened() {
    let r = analyzed(run(vec![cell("per-request", 32)
        .throughput(1000.0)
        .peak_open(29)
        .build()]));
    let rec = r.recommendation.expect("the only cell");
    assert_eq!(rec.pool_size, None);
    assert!(
        rec.why
            .contains("(no cap: up to 32, one per worker; 29 open at peak)"),
        "{}",
        rec.why
    );
}

#[test]
fn no_cell_within_both_bounds() {
    // The fastest has a bad tail, the best tail is slow.
    let r = run(vec![
        cell("pool:4", 32).throughput(1000.0).p99_ms(60.0).build(),
        cell("pool:8", 32).throughput(900.0).p99_ms(40.0).build(),
    ]);
    assert_eq!(
        analyzed(r).reason.as_deref(),
        Some("no cell at c=32 is within 5% of the peak throughput and 20% of the best p99")
    );
}

#[test]
fn cells_with_errors_or_stalls_are_not_considered() {
    // 20 errors in 980: 2%, refused; 9 in 969: under 1%, kept.
    let r = analyzed(run(grid(pool8(960.0, 45.0).errors("timeout", 20))));
    let rec = r.recommendation.expect("pool:16 still qualifies");
    assert_eq!(rec.strategy, "pool:16");
    assert!(
        rec.why.ends_with("; not considered: pool:8 2% errors"),
        "{}",
        rec.why
    );
    assert_eq!(
        picked(run(grid(pool8(960.0, 45.0).errors("timeout", 9)))).0,
        "pool:8"
    );

    let r = analyzed(run(grid(pool8(960.0, 45.0).stall(0.2, 0.5))));
    let rec = r.recommendation.expect("pool:16 still qualifies");
    assert_eq!(rec.strategy, "pool:16");
    assert!(
        rec.why.ends_with("; not considered: pool:8 stalled"),
        "{}",
        rec.why
    );

    let r = analyzed(run(grid(pool8(0.0, 45.0).errors("refused", 100))));
    let rec = r.recommendation.expect("pool:16 still qualifies");
    assert!(
        rec.why
            .ends_with("; not considered: pool:8 nothing succeeded"),
        "{}",
        rec.why
    );
}

#[test]
fn no_recommendation_when_every_cell_failed() {
    let bad = |s: &str| cell(s, 32).throughput(950.0).errors("reset", 50).build();
    let r = analyzed(run(vec![
        quiet("pool:4", 16, 500.0),
        bad("pool:4"),
        bad("pool:8"),
    ]));
    assert_eq!(r.recommendation, None);
    assert_eq!(
        r.reason.as_deref(),
        Some("every cell at c=32 failed more than 1% of its requests or stalled (pool:4 5% errors, pool:8 5% errors)")
    );
}

#[test]
fn no_recommendation_when_every_cell_is_at_the_ceiling() {
    // Server time = the whole latency: throughput is c ÷ service time.
    let at_ceiling =
        |s: &str, rps: f64| cell(s, 4).throughput(rps).service_ms(4000.0 / rps).build();
    let r = analyzed(run(vec![
        at_ceiling("pool:2", 1000.0),
        at_ceiling("pool:4", 1000.0),
    ]));
    assert_eq!(r.recommendation, None);
    let why = r.reason.expect("a reason");
    assert!(
        why.starts_with("at c=4 every cell is at the closed-loop ceiling"),
        "{why}"
    );
    // One cell below its ceiling is enough to rank.
    let r = analyzed(run(vec![
        at_ceiling("pool:2", 1000.0),
        quiet("pool:4", 4, 1000.0),
    ]));
    assert_eq!(
        r.recommendation.expect("pool:4 is not at it").strategy,
        "pool:2"
    );
}

#[test]
fn recommend_reads_the_ceiling_from_the_findings() {
    // recommend() alone, before any finding is found: nothing at the
    // ceiling yet, so it ranks; after analyze it refuses.
    let cell = cell("pool:4", 4).throughput(1000.0).service_ms(4.0).build();
    let mut r = run(vec![cell]);
    assert!(recommend(&r).is_ok());
    analyze(&mut r);
    assert!(recommend(&r).is_err());
    assert!(recommend(&run(Vec::new())).is_err_and(|e| e == "no cells were run"));
}

#[test]
fn with_an_slo_the_highest_level_where_a_cell_meets_it() {
    // Every c=32 cell has p99 ≥ 40 ms; at c=16, pool:4 breaks 24 ms.
    let mut cells = vec![
        cell("pool:4", 16).throughput(800.0).p99_ms(25.0).build(),
        cell("pool:8", 16).throughput(900.0).p99_ms(22.0).build(),
        cell("pool:16", 16).throughput(920.0).p99_ms(20.0).build(),
    ];
    cells.extend(
        grid(pool8(960.0, 45.0))
            .into_iter()
            .filter(|c| c.concurrency == 32),
    );
    let r = analyzed(run_with_slo("p99<24ms", cells.clone()));
    let rec = r.recommendation.expect("c=16 meets it");
    assert_eq!((rec.strategy.as_str(), rec.concurrency), ("pool:8", 16));
    assert!(
        rec.why
            .ends_with("; not considered: pool:4 breaks the SLO: p99 25.0 ms > 24.0 ms"),
        "{}",
        rec.why
    );
    // A bound every cell breaks: none.
    let r = analyzed(run_with_slo("p99<10ms", cells.clone()));
    assert_eq!(r.recommendation, None);
    assert!(r
        .reason
        .expect("a reason")
        .starts_with("no cell meets the SLO"));
    // Without the SLO, c=32.
    assert_eq!(picked(run(cells)), ("pool:8".to_string(), 32));
}
