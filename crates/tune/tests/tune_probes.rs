//! The probes the search makes before any load, through the same
//! `Measure` and `Clock` as its points (probes.rs): the idle close read
//! or measured within its share of the budget, the pipelining check
//! skipping a family, the server's own limit reaching the fleet.
use crate::tune_loop::{trail, tune_probing, tune_within, Probed, Service};
use poolbench_model::{Fleet, Replicas, TuneResult};
use poolbench_tune::{IdleLook, Probes, IDLE_SHARE};
use std::time::Duration;

const SEED: u64 = 7;
const RECOVERY: Duration = Duration::from_secs(60);

fn idle_look(up_to: u64) -> Probes {
    Probes {
        idle: Some(IdleLook {
            measure_up_to: Some(Duration::from_secs(up_to)),
        }),
        ..Probes::default()
    }
}

fn service(probed: Probed) -> Service {
    Service {
        probed,
        ..Service::new(24, 20.0)
    }
}

fn search(s: Service, families: &[&str], budget: u64, probes: Probes) -> TuneResult {
    let within = (RECOVERY, SEED, Duration::from_secs(budget));
    tune_probing(s, (64, families), within, (probes, None))
}

#[test]
fn an_idle_close_the_server_says_costs_no_time_and_changes_no_point() {
    let probed = Probed {
        idle: Some((true, Duration::from_secs(300))),
        ..Probed::default()
    };
    let plain = tune_within(
        service(probed.clone()),
        (64, &["pool"]),
        RECOVERY,
        SEED,
        Duration::from_secs(120),
    );
    let r = search(service(probed), &["pool"], 120, idle_look(60));
    let idle = r.server_idle.as_ref().expect("the idle close was read");
    assert_eq!(idle.idle_close_s, Some(300.0));
    assert_eq!(idle.source, "idle_session_timeout");
    assert_eq!(trail(&r), trail(&plain), "reading took no time");
}

#[test]
fn a_measured_idle_close_is_billed_to_the_budget() {
    let probed = Probed {
        idle: Some((false, Duration::from_secs(10))),
        ..Probed::default()
    };
    let budget = 240;
    let r = search(service(probed), &["pool"], budget, idle_look(60));
    let idle = r.server_idle.as_ref().expect("the idle close was measured");
    assert_eq!(idle.source, "measured");
    assert_eq!(idle.idle_close_s, Some(10.0));
    // Gaps of 1, 2, 4, 8 and 16 s were waited out before the first point,
    // on the search's own clock, and the search still kept its budget.
    assert!(r.elapsed_s >= 31.0, "{}", r.elapsed_s);
    assert!(r.elapsed_s <= 1.1 * budget as f64, "{}", r.elapsed_s);
    assert!(r.recommendation.is_some(), "{}", trail(&r));
}

#[test]
fn the_idle_measurement_stops_at_its_share_of_the_budget() {
    let probed = Probed {
        idle: Some((false, Duration::from_secs(10))),
        ..Probed::default()
    };
    let budget = 40;
    let r = search(service(probed), &["pool"], budget, idle_look(60));
    let idle = r
        .server_idle
        .as_ref()
        .expect("the idle close was looked at");
    // A quarter of 40 s allows gaps of 1, 2 and 4 s (7 s); the 8 s gap
    // would pass it, so the close (10 s) is not reached and it says so.
    assert!(IDLE_SHARE * budget as f64 >= 7.0 && IDLE_SHARE * (budget as f64) < 15.0);
    assert_eq!(idle.idle_close_s, None);
    assert!(idle.note.as_deref().unwrap_or_default().contains("open"));
    assert!(r.elapsed_s <= 1.25 * budget as f64, "{}", r.elapsed_s);
}

#[test]
fn a_server_that_refuses_pipelining_has_the_family_skipped_with_what_it_did() {
    let probed = Probed {
        no_pipelining: Some("closed after 1 answer"),
        ..Probed::default()
    };
    let probes = Probes {
        pipeline: Some(Duration::from_secs(2)),
        ..Probes::default()
    };
    let r = search(service(probed), &["pool", "pipeline"], 120, probes);
    let pipe = r.families_found.iter().find(|a| a.family == "pipeline");
    let why = pipe.and_then(|a| a.reason.as_deref()).unwrap_or_default();
    // 64 in flight on two connections is 32 deep; the probe writes 16.
    assert!(
        why.contains("16 written ahead on one connection: closed after 1 answer"),
        "{why}"
    );
    assert!(!r.points.iter().any(|p| p.strategy.starts_with("pipeline")));
    assert_eq!(r.recommendation.as_ref().unwrap().strategy, "pool");
}

#[test]
fn a_server_that_answers_pipelining_has_the_family_searched() {
    let probes = Probes {
        pipeline: Some(Duration::from_secs(2)),
        ..Probes::default()
    };
    let r = search(
        service(Probed::default()),
        &["pool", "pipeline"],
        120,
        probes,
    );
    assert!(r.points.iter().any(|p| p.strategy.starts_with("pipeline")));
}

#[test]
fn the_server_s_own_limit_reaches_the_fleet_and_bounds_its_budget() {
    let probed = Probed {
        limit: Some(12),
        ..Probed::default()
    };
    let probes = Probes {
        server_limit: true,
        ..Probes::default()
    };
    let fleet = Fleet {
        replicas: Replicas {
            min: 2,
            max: 2,
            surge_pct: 0,
        },
        server_limit: None,
        connection_limit: None,
        connection_limit_source: String::new(),
        pool_per_replica: None,
        rows: Vec::new(),
    };
    let within = (RECOVERY, SEED, Duration::from_secs(120));
    let r = tune_probing(
        service(probed),
        (64, &["pool"]),
        within,
        (probes, Some(fleet)),
    );
    let fleet = r.fleet.as_ref().expect("the fleet is kept");
    let limit = fleet.server_limit.as_ref().expect("the limit was read");
    assert_eq!(limit.connections, Some(12));
    assert!(
        fleet.connection_limit.is_some_and(|b| b <= 12),
        "{:?}",
        fleet.connection_limit
    );
    assert!(fleet.pool_per_replica.is_some_and(|n| n <= 6), "{fleet:?}");
}
