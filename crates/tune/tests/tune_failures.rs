//! The whole loop against simulated services that fail: each failure
//! waited out before the search goes on, the cliff measured twice before
//! it counts, a service that never recovers; and a search the user stops.
use crate::tune_loop::{fastapi, trail, tune, tune_within, Service};
use poolbench_model::{InferenceId, TunePhase, TuneResult};
use poolbench_tune::failure;
use std::time::Duration;

fn assert_waited_out(r: &TuneResult) {
    let mut owed = false;
    for p in &r.points {
        let healthy = failure(p, None, 0.5).is_none() && p.requests > 0;
        match (p.phase, healthy) {
            (TunePhase::Recovery, true) => owed = false,
            (TunePhase::Recovery, false) => {}
            (_, _) if owed => panic!("{} measured before the service recovered", p.strategy),
            (_, false) => owed = true,
            _ => {}
        }
    }
}

#[test]
fn a_service_that_freezes_for_30_s_is_waited_out_and_capped_below_its_cliff() {
    let r = tune(fastapi(), 50, &["pool"], Duration::from_secs(60));
    let cliff = r.capacity.cliff_in_flight.expect("a cliff");
    assert!((15..=18).contains(&cliff), "cliff {cliff}");
    let rec = r
        .recommendation
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", r.reason));
    assert!(rec.pool_size < cliff && rec.throughput_rps > 0.0, "{rec:?}");
    let cap = rec.cap.as_deref().expect("a cap at c=50");
    assert!(
        cap.contains("freezes") && cap.starts_with("above 1"),
        "{cap}"
    );
    assert!(r.stopped_early.is_none(), "{:?}", r.stopped_early);
    assert_waited_out(&r);
    // The 30 s freeze was waited out, not billed to the 120 s budget.
    assert!(
        r.elapsed_s > 30.0 + 40.0,
        "{} s\n{}",
        r.elapsed_s,
        trail(&r)
    );
    // A freeze that left the first ping unanswered for seconds counts at
    // once: the service is not frozen a second time to confirm it.
    assert_eq!(at_level(&r, cliff), 1, "{}", trail(&r));
    // Zero answers is a failure, stalled for its whole window.
    for p in r.points.iter().filter(|p| p.requests == 0) {
        assert!(p.stalled_s >= p.duration_s, "{p:?}");
    }
}

/// Capacity points measured at `in_flight`.
fn at_level(r: &TuneResult, in_flight: usize) -> usize {
    r.points
        .iter()
        .filter(|p| p.phase == TunePhase::Capacity && p.in_flight == in_flight)
        .count()
}

#[test]
fn a_brief_failure_is_measured_again_before_it_counts_as_the_cliff() {
    let service = Service {
        freeze_for: Duration::from_secs(2),
        ..fastapi()
    };
    let r = tune(service, 50, &["pool"], Duration::from_secs(60));
    let cliff = r.capacity.cliff_in_flight.expect("a cliff");
    assert!((15..=18).contains(&cliff), "cliff {cliff}");
    assert_eq!(at_level(&r, cliff), 2, "{}", trail(&r));
    assert_waited_out(&r);
}

#[test]
fn a_service_that_never_recovers_stops_the_search_and_nothing_is_recommended() {
    let service = Service {
        freeze_for: Duration::from_secs(3600),
        ..fastapi()
    };
    let r = tune(service, 50, &["pool"], Duration::from_secs(10));
    let why = r.stopped_early.as_deref().expect("stopped early");
    assert!(
        why.contains("froze at 16 in flight") && why.contains("had not recovered 10 s later"),
        "{why}"
    );
    assert!(r.recommendation.is_none());
    assert!(r.reason.as_deref().unwrap().contains("had not recovered"));
    // Nothing but recovery pings after the freeze.
    let first_freeze = r.points.iter().position(|p| p.requests == 0).unwrap();
    assert!(r.points[first_freeze + 1..]
        .iter()
        .all(|p| p.phase == TunePhase::Recovery));
    assert!(r.elapsed_s < 120.0, "{} s", r.elapsed_s);
}

#[test]
fn a_freeze_with_requests_queued_inside_is_waited_out_until_they_drain() {
    let service = Service {
        drain_each: Duration::from_secs(2),
        ..fastapi()
    };
    let r = tune(service, 50, &["pool"], Duration::from_secs(90));
    assert!(r.recommendation.is_some(), "{:?}", r.reason);
    assert_waited_out(&r);
    // 30 s, and 2 s for each of the 16 queued: the ping after the first
    // freeze was answered only once they had drained (62 s from the start
    // of the frozen point), and the
    // search waited for it (one request, not a stream of given-up ones).
    let freeze = r.points.iter().position(|p| p.requests == 0).unwrap();
    let ping = &r.points[freeze + 1];
    assert_eq!(
        (ping.phase, ping.requests, ping.errors),
        (TunePhase::Recovery, 1, 0)
    );
    assert!(ping.mean_us >= 60e6, "{ping:?}");
    // That freeze counts without a second one.
    assert!(r.elapsed_s > 62.0, "{} s", r.elapsed_s);
    assert_eq!(at_level(&r, 16), 1, "{}", trail(&r));
}

#[test]
fn a_500_ms_service_is_searched_to_the_clients_load_and_its_ceiling_named() {
    let service = Service::new(usize::MAX, 500.0);
    let r = tune(
        service,
        100,
        &["shared", "round-robin"],
        Duration::from_secs(60),
    );
    let cap = &r.capacity;
    assert!(cap.most_in_flight_tried >= 100, "{cap:?}");
    assert!(cap.still_rising && cap.cliff_in_flight.is_none(), "{cap:?}");
    assert!(cap.serves_at_once.is_none() && cap.knee_in_flight.is_none());
    assert!(r.elapsed_s <= 120.0, "{} s", r.elapsed_s);
    let rec = r
        .recommendation
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", r.reason));
    assert_eq!((rec.strategy.as_str(), rec.pool_size), ("shared", 1));
    let ceiling = r
        .inferences
        .iter()
        .find(|i| i.id == InferenceId::ClosedLoopCeiling)
        .expect("the ceiling named");
    assert_eq!(
        ceiling.text,
        "your 100 workers wait 0.5 s each: 200 req/s whatever the pool; one connection carries it"
    );
    // Little's law gave each point its throughput and interval.
    assert!(
        r.points
            .iter()
            .filter(|p| p.phase == TunePhase::Capacity)
            .all(|p| p.throughput_from_latency && p.runs <= 2),
        "{}",
        trail(&r)
    );
}

#[test]
fn a_service_that_collapses_after_a_delay_gets_a_cliff_there() {
    let service = Service {
        collapse_at: Some((40, Duration::from_millis(800))),
        ..Service::new(24, 20.0)
    };
    let r = tune(service, 100, &["pool"], Duration::from_secs(60));
    let cliff = r.capacity.cliff_in_flight.expect("a cliff");
    assert!((36..=44).contains(&cliff), "cliff {cliff}");
    let rec = r
        .recommendation
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", r.reason));
    assert!((20..40).contains(&rec.pool_size), "{rec:?}");
    assert!(rec.cap.is_some());
    assert_waited_out(&r);
}

#[test]
fn ctrl_c_ends_the_search_with_what_it_measured_and_no_failure_made_of_it() {
    // The run the signal falls in fails (the engine's cut-short run, or
    // none at all): whenever it comes, the search ends without an error,
    // says why, keeps the points before it, and never takes the cut run
    // for a failing point (no cliff on a service that never fails).
    for at in (1..=80).step_by(3) {
        let at = Duration::from_secs(at);
        let service = Service {
            interrupt_at: Some(at),
            ..Service::new(8, 5.0)
        };
        let r = tune_within(
            service,
            (64, &["pool"]),
            Duration::from_secs(60),
            7,
            Duration::from_secs(60),
        );
        let done = Duration::from_secs_f64(r.elapsed_s);
        if done < at {
            continue;
        }
        assert_eq!(r.stopped_early.as_deref(), Some("interrupted"), "at {at:?}");
        assert!(r.recommendation.is_none(), "at {at:?}");
        assert!(
            r.capacity.cliff_in_flight.is_none(),
            "at {at:?}\n{}",
            trail(&r)
        );
        assert!(
            r.points
                .iter()
                .all(|p| p.requests > 0 && p.error_rate == 0.0),
            "at {at:?}\n{}",
            trail(&r)
        );
        assert!(
            at < Duration::from_secs(3) || !r.points.is_empty(),
            "at {at:?}"
        );
    }
}
