//! SLO breaches: each bound a cell broke, with its figure.
use crate::support::{cell, run_with_slo};
use poolbench_analysis::analyze;
use poolbench_model::Slo;

fn slo(text: &str) -> Slo {
    text.parse().expect("a valid --slo")
}

#[test]
fn each_broken_bound_with_its_figure() {
    // 4000 ok and 100 failed: 2.44% errors; p50 ≈ 0.95 × the mean.
    let c = cell("pool:8", 8)
        .throughput(4000.0)
        .latency_ms(20.0)
        .p99_ms(60.0)
        .errors("status", 100)
        .build();
    assert_eq!(
        slo("p99<50ms,p50<10ms,errors<1%,throughput>5000").breaches(&c),
        [
            "p50 19.0 ms > 10.0 ms",
            "p99 60.0 ms > 50.0 ms",
            "errors 2.44% > 1.00%",
            "throughput 4000 < 5000 req/s",
        ]
    );
    // Bounds exactly met are met.
    assert_eq!(
        slo("p99<60ms,p50<19.1ms,errors<2.44%,throughput>4000").breaches(&c),
        Vec::<String>::new()
    );
    assert_eq!(slo("p99<59.9ms").breaches(&c), ["p99 60.0 ms > 59.9 ms"]);
}

#[test]
fn p90_and_p99_9_bounds_are_judged_on_their_own_percentiles() {
    let mut c = cell("pool:8", 8).throughput(1000.0).p99_ms(60.0).build();
    c.latency_us.p90 = 30_000.0;
    c.latency_us.p999 = 90_000.0;
    assert_eq!(
        slo("p90<25ms,p99.9<100ms").breaches(&c),
        ["p90 30.0 ms > 25.0 ms"]
    );
    assert_eq!(
        slo("p90<35ms,p99.9<80ms").breaches(&c),
        ["p99.9 90.0 ms > 80.0 ms"]
    );
}

#[test]
fn analyze_records_each_cells_breaches() {
    let ok = cell("pool:8", 8).throughput(1000.0).p99_ms(20.0).build();
    let slow = cell("pool:4", 8).throughput(1000.0).p99_ms(80.0).build();
    let mut r = run_with_slo("p99<50ms", vec![ok, slow]);
    analyze(&mut r);
    assert_eq!(r.cells[0].slo_breaches, Some(Vec::new()));
    assert_eq!(
        r.cells[1].slo_breaches,
        Some(vec!["p99 80.0 ms > 50.0 ms".to_string()])
    );
    // No SLO, no breaches recorded.
    let mut r = crate::support::run(vec![cell("pool:4", 8).p99_ms(80.0).build()]);
    analyze(&mut r);
    assert_eq!(r.cells[0].slo_breaches, None);
}
