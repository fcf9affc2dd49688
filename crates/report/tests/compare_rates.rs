//! Two find-rates compared on hand-built results: a rate that moved
//! beyond its interval (the gap to the rate that failed above it) and 5%
//! is significant and crosses `rate<-10%`, one within them is not, the
//! words say which, and a different SLO is named.
use poolbench_model::{FoundRate, RatePhase, RatePoint, RateResult, RateVerdict, Slo};
use poolbench_report::{compare_rates, figure_violations, parse_bounds, BOUNDABLE};

/// A hold of `rate` that held, `p99_ms` its p99.
fn hold(rate: f64, p99_ms: f64) -> RatePoint {
    RatePoint {
        phase: RatePhase::Confirm,
        rate_rps: rate,
        in_flight_cap: 96,
        held_s: 6.0,
        requests: (rate * 6.0) as u64,
        errors: 0,
        errors_by_kind: Default::default(),
        completed_rps: rate,
        p50_us: 21_000.0,
        p90_us: 22_000.0,
        p99_us: p99_ms * 1000.0,
        p999_us: p99_ms * 1100.0,
        mean_us: 21_000.0,
        backlog_growth_rps: 0.0,
        early_p99_us: p99_ms * 1000.0,
        late_p99_us: p99_ms * 1000.0,
        early_in_flight: 24.0,
        late_in_flight: 24.0,
        connections: 26,
        send_lag_p99_us: 50.0,
        generator_cpu: Some(0.2),
        verdict: RateVerdict::Holds,
        why: None,
    }
}

/// A find-rate that held `rate` three times and failed 2% above it.
fn found(rate: f64, slo: &str) -> RateResult {
    let slo: Slo = slo.parse().unwrap();
    let mut r = RateResult::begin("built-in server".into(), "pool:1024".into(), slo, 120.0);
    r.rate_points = vec![hold(rate, 30.0), hold(rate, 32.0), hold(rate, 31.0)];
    r.found = Some(FoundRate {
        rate_rps: rate,
        fails_at_rps: Some(rate * 1.02),
        width: Some(0.02),
        fails_by: Some(RateVerdict::NotSustained),
        fails_why: Some("the backlog grew 20 req/s".into()),
        held: 3,
        repetitions: 3,
        completed_rps: rate,
        completed_ci95: Some(rate * 0.002),
        p99_us: 32_000.0,
        in_flight_needed: rate * 0.021,
        connections: 26,
        summary: String::new(),
    });
    r
}

#[test]
fn a_rate_25_percent_lower_is_significant_and_fails_the_gate() {
    let c = compare_rates(&found(1140.0, "p99<100ms"), &found(850.0, "p99<100ms"));
    let rate = &c.figures[0];
    assert_eq!(rate.name, "rate");
    assert_eq!(rate.significant, Some(true), "{}", rate.basis);
    assert!((rate.change_pct.unwrap() + 25.4).abs() < 0.1);
    assert!(
        c.summary[0].starts_with("this build holds 25% less: 850 req/s"),
        "{:?}",
        c.summary
    );
    assert!(c.summary[0].contains("the backlog grew"), "{:?}", c.summary);
    let crossed = figure_violations(&c, &parse_bounds("rate<-10%").unwrap());
    assert_eq!(crossed.len(), 1, "{crossed:?}");
    assert!(figure_violations(&c, &parse_bounds("rate<-30%").unwrap()).is_empty());
}

#[test]
fn the_same_rate_within_its_interval_is_no_change_and_passes_the_gate() {
    let c = compare_rates(&found(1140.0, "p99<100ms"), &found(1150.0, "p99<100ms"));
    assert_eq!(
        c.figures[0].significant,
        Some(false),
        "{}",
        c.figures[0].basis
    );
    assert!(
        c.summary[0].starts_with("this build holds as much"),
        "{:?}",
        c.summary
    );
    assert!(figure_violations(&c, &parse_bounds("rate<-1%,throughput<-1%").unwrap()).is_empty());
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn a_different_slo_is_named_and_rates_have_their_own_bound_names() {
    let c = compare_rates(&found(1140.0, "p99<100ms"), &found(1140.0, "p99<50ms"));
    assert!(c.notes[0].contains("different SLOs"), "{:?}", c.notes);
    let names = BOUNDABLE.iter().find(|(k, _)| *k == "rate").unwrap().1;
    assert!(c.figures.iter().all(|f| names.contains(&f.name.as_str())));
}

#[test]
fn a_build_that_holds_no_rate_says_so() {
    let mut none = found(1140.0, "p99<100ms");
    none.found = None;
    none.reason = Some("no rate holds p99 < 100.0 ms: even 40 req/s failed".into());
    let c = compare_rates(&found(1140.0, "p99<100ms"), &none);
    assert!(c.summary[0].contains("holds no rate"), "{:?}", c.summary);
    assert_eq!(c.figures[0].significant, None);
}
