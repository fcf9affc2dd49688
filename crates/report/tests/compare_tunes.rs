//! Two tunes compared on hand-built results: which changes are beyond the
//! noise (throughputs by their 95% intervals, counts by the search's
//! resolution, the pick's p99 by its readings), what the comparison says
//! in words, which `--fail-if` bounds a change crosses, and the JUnit
//! cases and views that carry them.
use poolbench_model::{Capacity, TuneLoad, TunePhase, TunePoint, TuneRecommendation, TuneResult};
use poolbench_report::{
    compare_tunes, figure_checks, figure_violations, figures_junit, parse_bounds,
    render_figures_html, render_figures_markdown, render_figures_text, render_junit, resolution,
    ChangeIs, Figure, FigureComparison, BOUNDABLE,
};
use std::time::UNIX_EPOCH;

/// A point of the pool search at the client's load.
fn point(size: usize, rps: f64, ci: Option<f64>, p99_us: f64) -> TunePoint {
    TunePoint {
        phase: TunePhase::Confirm,
        strategy: format!("pool:{size}"),
        in_flight: 48,
        pool_size: size,
        rate: None,
        runs: 3,
        duration_s: 3.0,
        requests: (rps * 3.0) as u64,
        errors: 0,
        error_rate: 0.0,
        errors_by_kind: Default::default(),
        throughput_rps: rps,
        throughput_ci95: ci,
        throughput_from_latency: false,
        p50_us: p99_us * 0.9,
        p99_us,
        mean_us: p99_us * 0.9,
        checkout_wait_share: 0.5,
        stalled_s: 0.0,
        achieved_in_flight: 48.0,
        generator_cpu: None,
        hiccup_p99_us: 100.0,
        streams_allowed: None,
        checkout_wait_p999_us: None,
    }
}

/// A tune of a service that serves `n` at a time, 20 ms each: its peak
/// n / 20 ms (±1%), knee and "serves at once" n, no cliff up to 64, and
/// pool:n picked at the peak with p99 `p99_ms` read twice.
fn service(n: usize, p99_ms: f64) -> TuneResult {
    let mut r = TuneResult::begin(
        "built-in server at http://127.0.0.1:1/".into(),
        TuneLoad::Concurrency(48),
        None,
        120.0,
        vec!["pool".into()],
    );
    let peak = n as f64 / 0.02;
    r.capacity = Capacity {
        max_rps: peak,
        max_rps_ci95: Some(peak * 0.01),
        max_rps_in_flight: n,
        knee_in_flight: Some(n),
        serves_at_once: Some(n),
        service_time_us: Some(20_000.0),
        most_in_flight_tried: 64,
        ..Capacity::default()
    };
    r.recommendation = Some(TuneRecommendation {
        strategy: "pool".into(),
        spec: format!("pool:{n}"),
        pool_size: n,
        throughput_rps: peak,
        throughput_ci95: Some(peak * 0.01),
        p99_us: p99_ms * 1000.0,
        cap: None,
        tied_with: Vec::new(),
        client_settings: Vec::new(),
        timeouts: None,
    });
    r.points = vec![
        point(n, peak, Some(peak * 0.01), p99_ms * 1000.0 * 0.99),
        point(n, peak, Some(peak * 0.01), p99_ms * 1000.0 * 1.01),
    ];
    r
}

fn fig<'a>(c: &'a FigureComparison, name: &str) -> &'a Figure {
    c.figures.iter().find(|f| f.name == name).unwrap()
}

#[test]
fn a_service_that_serves_fewer_at_once_is_a_significant_drop_in_words() {
    let c = compare_tunes(&service(24, 41.0), &service(18, 54.0));
    for name in ["peak", "knee", "serves", "pick", "throughput", "p99"] {
        assert_eq!(fig(&c, name).significant, Some(true), "{name}: {c:#?}");
    }
    let peak = fig(&c, "peak");
    assert!((peak.change_pct.unwrap() + 25.0).abs() < 1e-9, "{peak:?}");
    assert_eq!(
        peak.basis,
        "300 apart, more than 12.0 + 9.0 (the 95% half-widths)"
    );
    // No cliff on either side: nothing to judge.
    assert_eq!(fig(&c, "cliff").significant, None);
    assert_eq!(
        c.summary[0],
        "this build serves 25% less at its pick (pool:24 → pool:18: 1,200 ±12.0 → 900 ±9.0 req/s): \
         the service now serves about 18 at a time (was 24), so a pool of 24 queues; set 18"
    );
    let peak = "the peak throughput fell 25% (1,200 ±12.0 → 900 ±9.0 req/s)";
    assert!(c.summary.contains(&peak.to_string()), "{:?}", c.summary);
    assert!(
        c.summary
            .contains(&"the knee fell 25% (24 ±2.4 → 18 ±1.8 in flight)".to_string()),
        "{:?}",
        c.summary
    );
    assert!(
        c.summary
            .iter()
            .any(|s| s.starts_with("the p99 at the pick rose 32% (")),
        "{:?}",
        c.summary
    );
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn the_same_service_twice_changes_nothing_significant() {
    let mut again = service(24, 41.5);
    again.capacity.max_rps = 1_190.0;
    again.capacity.knee_in_flight = Some(23);
    again.recommendation.as_mut().unwrap().pool_size = 22;
    let c = compare_tunes(&service(24, 41.0), &again);
    for f in &c.figures {
        assert_ne!(f.significant, Some(true), "{f:?}");
    }
    assert_eq!(fig(&c, "knee").significant, Some(false));
    assert_eq!(
        fig(&c, "p99").significant,
        Some(false),
        "{:?}",
        fig(&c, "p99")
    );
    assert!(
        c.summary[0].starts_with(
            "this build serves as much at the same pool (pool:24: 1,200 ±12.0 → 1,200 ±12.0 req/s, within the 95% intervals): "
        ),
        "{:?}",
        c.summary
    );
    assert!(
        c.summary[0].ends_with("keep 24 (the search picked 22, within its resolution)"),
        "{:?}",
        c.summary
    );
    assert_eq!(c.summary.len(), 1, "{:?}", c.summary);
    let bounds = parse_bounds("peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%").unwrap();
    assert!(figure_violations(&c, &bounds).is_empty());
}

#[test]
fn where_the_after_tune_measured_the_old_pick_the_answer_is_at_the_same_pool() {
    let mut after = service(18, 54.0);
    // The after tune's pool search measured pool:24 as well.
    after
        .points
        .insert(0, point(24, 880.0, Some(9.0), 60_000.0));
    let c = compare_tunes(&service(24, 41.0), &after);
    assert!(
        c.summary[0].starts_with("this build serves 27% less at the same pool (pool:24: 1,200 ±12.0 → 880 ±9.0 req/s): the service now serves about 18"),
        "{:?}",
        c.summary
    );
    // The peak, not in the answer, is said apart.
    assert!(
        c.summary
            .iter()
            .any(|s| s.starts_with("the peak throughput fell 25%")),
        "{:?}",
        c.summary
    );
}

#[test]
fn a_throughput_within_5_percent_is_no_change_however_narrow_its_intervals() {
    let mut after = service(24, 41.0);
    after.capacity.max_rps = 1_160.0;
    after.capacity.max_rps_ci95 = Some(2.0);
    let mut before = service(24, 41.0);
    before.capacity.max_rps_ci95 = Some(2.0);
    let peak = fig(&compare_tunes(&before, &after), "peak").clone();
    assert_eq!(peak.significant, Some(false), "{peak:?}");
    assert_eq!(
        peak.basis,
        "40.0 apart, more than 2.0 + 2.0 (the 95% half-widths) but within 5%: tune reads throughputs that close as equal"
    );
    after.capacity.max_rps = 1_130.0;
    assert_eq!(
        fig(&compare_tunes(&before, &after), "peak").significant,
        Some(true)
    );
}

#[test]
fn counts_move_significantly_only_beyond_the_search_s_resolution() {
    let knee = |b: usize, a: usize| {
        let mut before = service(24, 41.0);
        let mut after = service(24, 41.0);
        before.capacity.knee_in_flight = Some(b);
        after.capacity.knee_in_flight = Some(a);
        fig(&compare_tunes(&before, &after), "knee").significant
    };
    // 24 ±2.4 and 20 ±2: 4 apart, within 4.4.
    assert_eq!(knee(24, 20), Some(false));
    assert_eq!(knee(24, 19), Some(true));
    // Small counts are known to ±1 each.
    assert_eq!(knee(5, 3), Some(false));
    assert_eq!(knee(5, 2), Some(true));
    assert_eq!(knee(3, 5), Some(false));
}

#[test]
fn the_resolution_is_the_one_the_search_stops_at() {
    for n in 1..500usize {
        let step = resolution(n as f64).floor() as usize;
        assert!(poolbench_tune::close_enough(n, n + step), "{n}");
        assert!(!poolbench_tune::close_enough(n, n + step + 1), "{n}");
    }
}

#[test]
fn a_cliff_that_appeared_is_a_fall_from_beyond_the_most_tried() {
    let mut after = service(24, 41.0);
    after.capacity.cliff_in_flight = Some(32);
    after.capacity.cliff_reason = Some("errors".into());
    let c = compare_tunes(&service(24, 41.0), &after);
    let cliff = fig(&c, "cliff");
    assert_eq!(cliff.change_is, ChangeIs::AtMost);
    assert_eq!(cliff.change_text(), "at most -50.0%");
    assert_eq!(cliff.significant, Some(true));
    assert!(
        c.summary
            .contains(&"a cliff appeared at 32 in flight (none up to 64 before)".to_string()),
        "{:?}",
        c.summary
    );
    let crossed = |text: &str| !figure_violations(&c, &parse_bounds(text).unwrap()).is_empty();
    assert!(crossed("cliff<-10%"));
    // Known only as "at most -50%": a bound above is not known crossed.
    assert!(!crossed("cliff>-90%"));
    // And gone again: at least +100%.
    let c = compare_tunes(&after, &service(24, 41.0));
    assert_eq!(fig(&c, "cliff").change_text(), "at least +100.0%");
    assert!(
        c.summary
            .contains(&"the cliff at 32 in flight is gone (none up to 64 now)".to_string()),
        "{:?}",
        c.summary
    );
}

#[test]
fn a_peak_still_rising_is_a_lower_bound_and_what_cannot_be_told_fails_nothing() {
    let mut before = service(24, 41.0);
    before.capacity.still_rising = true;
    before.capacity.knee_in_flight = None;
    let c = compare_tunes(&before, &service(18, 54.0));
    assert_eq!(fig(&c, "peak").change_is, ChangeIs::AtMost);
    assert_eq!(fig(&c, "peak").significant, Some(true));
    let peak = "the peak throughput fell at least 25% (≥ 1,200 → 900 ±9.0 req/s)";
    assert!(c.summary.contains(&peak.to_string()), "{:?}", c.summary);
    // Rising from a peak that was still rising: the change cannot be told.
    let c = compare_tunes(&before, &service(30, 41.0));
    assert_eq!(fig(&c, "peak").significant, None);
    // No interval, one reading: cannot be told, and no bound fails on it.
    let mut after = service(18, 80.0);
    after.recommendation.as_mut().unwrap().throughput_ci95 = None;
    after.points.truncate(1);
    let c = compare_tunes(&service(24, 41.0), &after);
    assert_eq!(fig(&c, "throughput").significant, None);
    assert_eq!(fig(&c, "p99").significant, None);
    assert_eq!(
        fig(&c, "p99").basis,
        "2 and 1 readings: 2 a side are needed to tell"
    );
    assert!(figure_violations(&c, &parse_bounds("throughput<-10%,p99>+20%").unwrap()).is_empty());
}

#[test]
fn each_bound_fails_on_its_own_figure() {
    let c = compare_tunes(&service(24, 41.0), &service(18, 54.0));
    for (bound, crossed) in [
        ("peak<-10%", true),
        ("peak<-30%", false),
        ("knee<-10%", true),
        ("serves<-10%", true),
        ("pick<-10%", true),
        ("throughput<-10%", true),
        ("p99>+20%", true),
        ("p99>+50%", false),
        ("cliff<-10%", false),
    ] {
        let checks = figure_checks(&c, &parse_bounds(bound).unwrap());
        assert_eq!(checks[0].crossed, crossed, "{bound}: {checks:?}");
    }
    let checks = figure_checks(&c, &parse_bounds("knee<-10%").unwrap());
    assert_eq!(
        checks[0].measured,
        "knee -25.0% (significant; 24 ±2.4 → 18 ±1.8 in flight)"
    );
    assert_eq!(
        checks[0].line,
        "knee -25.0% (24 ±2.4 → 18 ±1.8 in flight; bound knee<-10)"
    );
}

#[test]
fn every_figure_of_a_tune_is_a_name_fail_if_knows() {
    let c = compare_tunes(&service(24, 41.0), &service(18, 54.0));
    let names: Vec<&str> = c.figures.iter().map(|f| f.name.as_str()).collect();
    let tune = BOUNDABLE.iter().find(|(k, _)| *k == "tune").unwrap().1;
    assert_eq!(names, tune);
}

#[test]
fn junit_has_a_case_per_bound_or_per_figure() {
    let c = compare_tunes(&service(24, 41.0), &service(18, 54.0));
    let bounds =
        parse_bounds("peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%,cliff<-10%").unwrap();
    let suites = figures_junit(&c, &bounds, UNIX_EPOCH);
    let cases = &suites[0].cases;
    assert_eq!(cases.len(), 6);
    assert_eq!(cases[0].name, "fail-if peak<-10");
    assert_eq!(cases[0].class, "compare tune");
    assert!(cases[0]
        .failure
        .as_deref()
        .unwrap()
        .starts_with("crossed: peak -25.0%"));
    assert_eq!(cases.iter().filter(|x| x.failure.is_some()).count(), 5);
    let xml = render_junit(&suites);
    assert_eq!(xml.matches("<testcase ").count(), 6, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 5, "{xml}");
    let cases = &figures_junit(&c, &[], UNIX_EPOCH)[0].cases;
    assert_eq!(cases.len(), 7);
    assert!(cases.iter().all(|x| x.failure.is_none()));
    assert_eq!(
        cases[1].measured,
        "knee 24 ±2.4 → 18 ±1.8 in flight: -25.0% (significant)"
    );
}

#[test]
fn views_carry_the_answer_and_every_figure() {
    let c = compare_tunes(&service(24, 41.0), &service(18, 54.0));
    let text = render_figures_text(&c);
    assert!(
        text.starts_with("poolbench compare · two tunes\n"),
        "{text}"
    );
    assert!(text.contains(&c.summary[0]), "{text}");
    for f in &c.figures {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{} ", f.name))),
            "{}: {text}",
            f.name
        );
    }
    let md = render_figures_markdown(&c);
    assert!(md.contains(&format!("**{}**", c.summary[0])), "{md}");
    assert_eq!(md.matches("\n| ").count(), 1 + c.figures.len(), "{md}");
    let html = render_figures_html(&c);
    assert_eq!(html.matches("<svg ").count(), 1, "{html}");
    // A bar per figure with a change (the cliff has none).
    assert_eq!(html.matches("<rect ").count(), 6, "{html}");
    assert_eq!(html.matches("<tr><td>").count(), 7, "{html}");
    let json: serde_json::Value = serde_json::to_value(&c).unwrap();
    assert_eq!(json["kind"], "tune");
    assert_eq!(json["figures"][0]["name"], "peak");
}

#[test]
fn tunes_of_different_loads_are_said_to_answer_different_questions() {
    let mut after = service(24, 41.0);
    after.load = TuneLoad::Concurrency(64);
    after.stopped_early = Some("interrupted".into());
    let c = compare_tunes(&service(24, 41.0), &after);
    assert_eq!(
        c.notes,
        [
            "tuned for different loads (c=48 before, c=64 after): the picks answer different questions",
            "the after search stopped early (interrupted): its figures may be partial"
        ]
    );
    after.recommendation = None;
    after.reason = Some("the service froze at 16 in flight".into());
    let c = compare_tunes(&service(24, 41.0), &after);
    assert!(
        c.summary
            .contains(&"no pool is recommended now: the service froze at 16 in flight".to_string()),
        "{:?}",
        c.summary
    );
    assert_eq!(fig(&c, "pick").significant, None);
}
