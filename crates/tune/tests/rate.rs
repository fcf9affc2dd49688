//! `tune --find-rate` on simulated queues with a simulated clock: the
//! rate found against the queue's capacity, a point over capacity judged
//! not sustained while its p99 is still under the SLO, a service that
//! freezes above N in flight waited out and answered below the freeze,
//! one that never recovers, the budget, and the next-rate decisions on
//! hand-built points.
use crate::rate_sim::{Queue, SimClock, SimQueue};
use poolbench_model::{
    RatePhase, RatePoint, RateResult, RateVerdict, Slo, StrategySpec, TunePhase,
};
use poolbench_tune::rate::{in_flight_cap, judge, next, Next, RateSearcher, RateSetup};
use poolbench_tune::{Ask, Measure};
use std::time::Duration;

fn slo(text: &str) -> Slo {
    text.parse().expect("an SLO")
}

fn setup(slo_text: &str, budget_s: u64) -> RateSetup {
    RateSetup {
        slo: slo(slo_text),
        budget: Duration::from_secs(budget_s),
        recovery: Duration::from_secs(60),
        strategy: StrategySpec::Pool(Some(1024)),
        most_in_flight: 1024,
        warmup: Duration::from_millis(500),
        hold: None,
        threads: None,
    }
}

/// The whole search against `queue`, with the simulation kept to look at.
fn search(queue: Queue, setup: RateSetup, seed: u64) -> (RateResult, usize, Duration) {
    let clock = SimClock::default();
    let sim = SimQueue::new(queue, clock.clone(), seed);
    let frozen = sim.held_while_frozen.clone();
    let skeleton = RateResult::begin(
        "sim".into(),
        setup.strategy.to_string(),
        setup.slo.clone(),
        setup.budget.as_secs_f64(),
    );
    let r = RateSearcher::new(setup, skeleton, sim, clock.clone())
        .run()
        .expect("a simulated search");
    (r, frozen.get(), clock.0.get())
}

#[test]
fn the_rate_found_is_within_5_percent_under_the_capacity_never_above() {
    for seed in 1..=5 {
        let mut q = Queue::new(1200.0, 20.0);
        q.noise = 0.01;
        let (r, _, took) = search(q, setup("p99<100ms", 120), seed);
        let f = r.found.as_ref().expect("a rate");
        // Each run's capacity is 1,200 ± 1%: never above that.
        assert!(
            (1140.0..=1212.0).contains(&f.rate_rps),
            "seed {seed}: {} req/s for a capacity of 1,200 ± 1%",
            f.rate_rps
        );
        // Confirmed: held in two of its three holds at least.
        assert!(
            f.repetitions == 3 && f.held >= 2,
            "seed {seed}: {} of {}",
            f.held,
            f.repetitions
        );
        assert!(f
            .fails_at_rps
            .is_some_and(|hi| hi > f.rate_rps && hi / f.rate_rps <= 1.031));
        assert!(took <= Duration::from_secs(120), "seed {seed}: {took:?}");
        // Little's law at the answer: the rate × 20 ms at least, more with
        // what queued near capacity.
        let alone = f.rate_rps * 0.020;
        assert!(
            (0.95 * alone..=2.0 * alone).contains(&f.in_flight_needed),
            "{}",
            f.in_flight_needed
        );
        assert!(f.summary.contains("fails at"), "{}", f.summary);
    }
}

/// One hold of the queue at `rate` for `hold`, judged against p99 < 150 ms.
fn hold(q: Queue, rate: f64, hold: Duration) -> RatePoint {
    let clock = SimClock::default();
    let mut sim = SimQueue::new(q, clock, 7);
    let ask = Ask {
        phase: TunePhase::Capacity,
        strategy: StrategySpec::Pool(Some(1024)),
        in_flight: 1024,
        window: hold,
        rate: Some(rate),
        requests: None,
        threads: None,
        by_second: true,
    };
    let cell = sim.run(&ask).expect("a run").cell;
    judge(RatePhase::Bisect, (rate, 1024), &cell, &slo("p99<150ms"))
}

#[test]
fn a_point_3_percent_over_capacity_is_not_sustained_though_its_p99_is_under_the_slo() {
    // 2.5 s at 36 req/s too many (the warm-up too): 90 queued, 75 ms
    // of waiting at the end, the p99 still under 150 ms.
    let p = hold(Queue::new(1200.0, 20.0), 1236.0, Duration::from_secs(2));
    assert!(p.p99_us < 150_000.0, "p99 {} µs", p.p99_us);
    assert_eq!(p.verdict, RateVerdict::NotSustained, "{:?}", p.why);
    assert!(
        (25.0..=50.0).contains(&p.backlog_growth_rps),
        "{}",
        p.backlog_growth_rps
    );
    assert!(p.why.as_deref().unwrap_or("").contains("the backlog grew"));
    // And 3% under it holds.
    let under = hold(Queue::new(1200.0, 20.0), 1164.0, Duration::from_secs(2));
    assert_eq!(under.verdict, RateVerdict::Holds, "{:?}", under.why);
    assert!(under.backlog_growth_rps.abs() < 10.0);
}

#[test]
fn a_service_that_freezes_above_n_in_flight_is_answered_below_the_freeze_and_waited_out() {
    for seed in 1..=3 {
        // 20 ms a request: more than 10 in flight from 500 req/s on.
        let mut q = Queue::new(5000.0, 20.0);
        q.freeze_above = Some(10.0);
        q.freeze_for = Duration::from_secs(30);
        let (r, while_frozen, _) = search(q, setup("p99<100ms", 120), seed);
        let f = r.found.as_ref().expect("a rate below the freeze");
        assert!(
            (450.0..=500.0).contains(&f.rate_rps),
            "seed {seed}: {}",
            f.rate_rps
        );
        assert_eq!(while_frozen, 0, "seed {seed}: a rate was held while frozen");
        assert!(r
            .rate_points
            .iter()
            .filter(|p| p.rate_rps > 500.0)
            .all(|p| p.verdict == RateVerdict::Errors));
        assert!(r.stopped_early.is_none(), "{:?}", r.stopped_early);
    }
}

#[test]
fn a_fastapi_like_service_is_not_handed_the_pile_of_requests_that_would_freeze_it_for_minutes() {
    // One request at a time, 2.4 ms each (about 400 req/s); above 15 in
    // flight it freezes 30 s, and 30 s more for each request above 15.
    let mut q = Queue::new(400.0, 2.4);
    q.freeze_above = Some(15.0);
    q.freeze_for = Duration::from_secs(30);
    q.freeze_each = Duration::from_secs(30);
    for seed in 1..=3 {
        let (r, while_frozen, _) = search(q.clone(), setup("p99<100ms", 120), seed);
        assert!(
            r.stopped_early.is_none(),
            "seed {seed}: {:?}",
            r.stopped_early
        );
        assert_eq!(while_frozen, 0);
        let f = r.found.as_ref().expect("a rate");
        assert!(
            (370.0..=404.0).contains(&f.rate_rps),
            "seed {seed}: {}",
            f.rate_rps
        );
        // It never froze: no point failed by its timeouts.
        assert!(
            r.rate_points
                .iter()
                .all(|p| p.verdict != RateVerdict::Errors),
            "seed {seed}"
        );
    }
}

#[test]
fn the_cap_is_four_times_what_the_rate_needs_and_8_more_within_the_most() {
    assert_eq!(in_flight_cap(1000.0, 20_000.0, 1024), 88);
    assert_eq!(in_flight_cap(327.0, 2_400.0, 1024), 12);
    assert_eq!(in_flight_cap(50_000.0, 20_000.0, 1024), 1024);
    assert_eq!(in_flight_cap(1.0, 1.0, 4), 4);
}

#[test]
fn a_service_that_never_recovers_ends_the_search_and_says_so() {
    let mut q = Queue::new(5000.0, 20.0);
    q.freeze_above = Some(10.0);
    q.freeze_for = Duration::from_secs(3600);
    let (r, while_frozen, _) = search(q, setup("p99<100ms", 120), 1);
    let why = r.stopped_early.as_deref().unwrap_or("");
    assert!(why.contains("had not recovered 60 s later"), "{why}");
    assert_eq!(while_frozen, 0);
    // What held before is reported as held once, unconfirmed.
    let f = r.found.as_ref().expect("the rate held before the freeze");
    assert!(f.rate_rps < 500.0 && f.repetitions == 1);
}

#[test]
fn no_rate_holds_when_one_request_alone_breaks_the_slo() {
    let (r, _, _) = search(Queue::new(1200.0, 20.0), setup("p99<10ms", 120), 1);
    assert!(r.found.is_none());
    let why = r.reason.as_deref().unwrap_or("");
    assert!(why.starts_with("no rate holds p99 < 10.0 ms"), "{why}");
    assert!(why.contains("latency"), "{why}");
}

#[test]
fn the_search_keeps_within_its_budget_and_says_what_it_could_not_do() {
    let (r, _, took) = search(Queue::new(100_000.0, 1.0), setup("p99<100ms", 20), 1);
    assert!(took <= Duration::from_secs(20), "{took:?}");
    let why = r.stopped_early.as_deref().unwrap_or("");
    assert!(why.starts_with("the budget ran out"), "{why}");
}

#[test]
fn a_rate_poolbench_cannot_send_is_never_the_answer_nor_held_again() {
    let mut q = Queue::new(100_000.0, 1.0);
    q.generator = Some(3000.0);
    let (r, _, _) = search(q, setup("p99<100ms", 120), 1);
    let limited: Vec<f64> = r
        .rate_points
        .iter()
        .filter(|p| p.verdict == RateVerdict::GeneratorLimited)
        .map(|p| p.rate_rps)
        .collect();
    assert!(!limited.is_empty());
    let mut dedup = limited.clone();
    dedup.dedup();
    assert_eq!(limited.len(), dedup.len(), "held again: {limited:?}");
    let f = r
        .found
        .as_ref()
        .expect("a rate under the generator's limit");
    assert!(
        f.rate_rps <= 3000.0 && f.rate_rps >= 2900.0,
        "{}",
        f.rate_rps
    );
    assert!(f.summary.contains("could not send"), "{}", f.summary);
}

/// A hand-built point at `rate` with `verdict` (completing `done` req/s).
fn point(phase: RatePhase, rate: f64, verdict: RateVerdict, done: f64) -> RatePoint {
    RatePoint {
        phase,
        verdict,
        completed_rps: done,
        why: (!verdict.holds()).then(|| "made so".into()),
        ..hold(Queue::new(1e6, 1.0), rate, Duration::from_secs(3))
    }
}

#[test]
fn rates_double_until_one_fails_then_the_gap_is_halved_geometrically() {
    use RatePhase::*;
    use RateVerdict::*;
    assert_eq!(next(&[], 40.0, 1e7), Next::Hold(40.0, Bracket));
    let up = [point(Bracket, 40.0, Holds, 40.0)];
    assert_eq!(next(&up, 40.0, 1e7), Next::Hold(80.0, Bracket));
    let failed = [
        point(Bracket, 400.0, Holds, 400.0),
        point(Bracket, 800.0, Latency, 800.0),
    ];
    assert_eq!(
        next(&failed, 40.0, 1e7),
        Next::Hold((400.0f64 * 800.0).sqrt(), Bisect)
    );
    // A growing backlog tells what the service completed: just under it.
    let backlog = [
        point(Bracket, 800.0, Holds, 800.0),
        point(Bracket, 1600.0, NotSustained, 1200.0),
    ];
    assert_eq!(next(&backlog, 40.0, 1e7), Next::Hold(1176.0, Bisect));
    // So does a latency failure that completed clearly less than its rate.
    let saturated = [
        point(Bracket, 400.0, Holds, 400.0),
        point(Bracket, 800.0, Latency, 600.0),
    ];
    assert_eq!(next(&saturated, 40.0, 1e7), Next::Hold(588.0, Bisect));
    // The first rate fails: a quarter of it.
    let first = [point(Bracket, 400.0, Errors, 0.0)];
    assert_eq!(next(&first, 400.0, 1e7), Next::Hold(100.0, Bracket));
}

#[test]
fn within_3_percent_the_answer_is_repeated_and_a_failed_repetition_lowers_it() {
    use RatePhase::*;
    use RateVerdict::*;
    let close = vec![
        point(Bisect, 1000.0, Holds, 1000.0),
        point(Bisect, 1025.0, NotSustained, 1010.0),
    ];
    assert_eq!(next(&close, 40.0, 1e7), Next::Hold(1000.0, Confirm));
    let mut confirmed = close.clone();
    confirmed.push(point(Confirm, 1000.0, Holds, 1000.0));
    confirmed.push(point(Confirm, 1000.0, Holds, 1000.0));
    assert_eq!(next(&confirmed, 40.0, 1e7), Next::Done);
    // Two of three repetitions fail: 1,000 no longer holds, and the gap
    // below it (to 900) is halved again.
    let mut lowered = close;
    lowered.insert(0, point(Bisect, 900.0, Holds, 900.0));
    lowered.push(point(Confirm, 1000.0, NotSustained, 990.0));
    lowered.push(point(Confirm, 1000.0, NotSustained, 990.0));
    match next(&lowered, 40.0, 1e7) {
        Next::Hold(r, Bisect) => assert!(r > 900.0 && r < 1000.0, "{r}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ctrl_c_ends_the_rate_search_with_the_holds_before_it() {
    // The hold the signal falls in fails (cut short): whenever it comes,
    // the search ends without an error, says why, and keeps only the
    // holds measured whole before it.
    let mut interrupted = 0;
    for at in (1..=90).step_by(4) {
        let at = Duration::from_secs(at);
        let mut q = Queue::new(1200.0, 20.0);
        q.interrupt_at = Some(at);
        let (r, _, took) = search(q, setup("p99<100ms", 120), 3);
        if took < at {
            continue;
        }
        interrupted += 1;
        assert_eq!(r.stopped_early.as_deref(), Some("interrupted"), "at {at:?}");
        assert!(
            r.rate_points.iter().all(|p| p.requests > 0),
            "at {at:?}: a hold cut short was kept"
        );
    }
    assert!(interrupted > 5, "{interrupted} searches interrupted");
}
