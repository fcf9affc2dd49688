//! `analyze` itself: a pure function of the cells and the plan.
use crate::support::{cell, open_run, quiet, run, run_with_slo};
use poolbench_analysis::{analyze, find_all, usl_fits};
use poolbench_model::CellResult;

/// A closed-loop grid with findings, a recommendation, a fit and an SLO.
fn busy_grid() -> Vec<CellResult> {
    let mut cells: Vec<CellResult> = [(1, 100.0), (2, 200.0), (4, 400.0), (8, 410.0)]
        .into_iter()
        .map(|(c, rps)| quiet("pool:16", c, rps))
        .collect();
    cells.extend([
        cell("pool:2", 8).throughput(300.0).wait_ms(10.0).build(),
        cell("round-robin:4", 8)
            .throughput(390.0)
            .errors("timeout", 30)
            .stall(0.3, 0.4)
            .samples(1)
            .build(),
    ]);
    cells
}

#[test]
fn analyzing_twice_gives_the_same_json() {
    let mut r = run_with_slo("p99<40ms,errors<5%", busy_grid());
    analyze(&mut r);
    let once = serde_json::to_string(&r).expect("serializes");
    assert!(!r.findings.is_empty() && !r.scaling.is_empty(), "{once}");
    assert!(r.recommendation.is_some(), "{:?}", r.reason);
    analyze(&mut r);
    assert_eq!(serde_json::to_string(&r).expect("serializes"), once);
    // Through JSON and back, then again: the same.
    let mut read: poolbench_model::RunResult = serde_json::from_str(&once).expect("reads back");
    analyze(&mut read);
    assert_eq!(serde_json::to_string(&read).expect("serializes"), once);
}

#[test]
fn analyze_replaces_what_the_result_held() {
    let mut r = run(busy_grid());
    analyze(&mut r);
    let fresh = serde_json::to_string(&r).expect("serializes");
    // Stale findings from an older analysis are dropped, not kept.
    let mut stale = r.clone();
    stale.findings = find_all(&run(vec![cell("pool:4", 4).stall(0.0, 1.0).build()]));
    stale.recommendation = None;
    stale.reason = Some("stale".into());
    stale.scaling.clear();
    analyze(&mut stale);
    assert_eq!(serde_json::to_string(&stale).expect("serializes"), fresh);
}

#[test]
fn the_findings_are_ordered_by_id() {
    let mut r = run(busy_grid());
    analyze(&mut r);
    let ids: Vec<&str> = r.findings.iter().map(|p| p.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    for id in [
        "errors",
        "few-samples",
        "pool-queueing",
        "stall",
        "target-saturated",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
}

#[test]
fn no_scaling_fit_for_an_open_loop() {
    // The same cells: a closed loop gets a fit, an open loop none (its
    // concurrency levels are caps on requests in flight).
    let mut closed = run(busy_grid());
    analyze(&mut closed);
    assert_eq!(closed.scaling.len(), 1);
    assert_eq!(closed.scaling, usl_fits(&closed));
    let mut open = open_run(400.0, busy_grid());
    analyze(&mut open);
    assert!(open.scaling.is_empty(), "{:?}", open.scaling);
}
