//! `tune --replicas` decisions on hand-built figures: the fleet's connection
//! limit, the
//! division by the worst-case replica count, the rows, the
//! `fleet-overcommit` finding.
use crate::support::limit;
use poolbench_model::{Capacity, Replicas};
use poolbench_tune::{per_replica, plan_fleet, row_counts};

fn capacity(knee: Option<usize>, cliff: Option<usize>) -> Capacity {
    Capacity {
        knee_in_flight: knee,
        cliff_in_flight: cliff,
        ..Capacity::default()
    }
}

#[test]
fn the_worst_case_counts_the_surge_rounded_up() {
    let r = |min, max, surge_pct| Replicas {
        min,
        max,
        surge_pct,
    };
    assert_eq!(r(4, 4, 0).worst_case(), 4);
    assert_eq!(r(4, 4, 25).worst_case(), 5);
    assert_eq!(r(1, 1, 25).worst_case(), 2);
    assert_eq!(r(2, 10, 25).worst_case(), 13);
    assert_eq!(r(3, 8, 100).worst_case(), 16);
}

#[test]
fn the_pool_per_replica_is_the_connection_limit_divided_never_above_the_pick() {
    assert_eq!(per_replica(Some(24), 4, Some(23)), Some(6));
    assert_eq!(per_replica(Some(92), 5, Some(10)), Some(10));
    assert_eq!(per_replica(Some(92), 5, None), Some(18));
    assert_eq!(per_replica(Some(3), 5, Some(10)), Some(1), "at least one");
    assert_eq!(per_replica(None, 5, Some(10)), Some(10));
    assert_eq!(per_replica(None, 5, None), None);
}

#[test]
fn rows_run_from_min_to_max_then_the_surge_at_most_seven() {
    let r = |min, max, surge_pct| Replicas {
        min,
        max,
        surge_pct,
    };
    assert_eq!(row_counts(r(4, 4, 0)), vec![4]);
    assert_eq!(row_counts(r(4, 4, 25)), vec![4, 5]);
    assert_eq!(row_counts(r(2, 4, 25)), vec![2, 3, 4, 5]);
    let wide = row_counts(r(1, 100, 25));
    assert!(wide.len() <= 7, "{wide:?}");
    assert_eq!(
        (wide[0], wide[wide.len() - 2], wide[wide.len() - 1]),
        (1, 100, 125)
    );
}

#[test]
fn the_connection_limit_is_the_lower_of_the_knee_and_the_server_s_limit() {
    // The knee (24) under the server's 92: 24 ÷ 4 = 6 each.
    let f = plan_fleet(
        Replicas {
            min: 4,
            max: 4,
            surge_pct: 0,
        },
        Some(limit(92)),
        &capacity(Some(24), None),
        Some(23),
    );
    assert_eq!(
        (f.connection_limit, f.pool_per_replica),
        (Some(24), Some(6))
    );
    assert!(
        f.connection_limit_source.starts_with("the service's knee"),
        "{}",
        f.connection_limit_source
    );
    assert!(f.rows.iter().all(|r| r.within_limit));
    // The server's 17 under the knee (40), with a surge: 17 ÷ 5 = 3 each.
    let f = plan_fleet(
        Replicas {
            min: 4,
            max: 4,
            surge_pct: 25,
        },
        Some(limit(17)),
        &capacity(Some(40), None),
        Some(30),
    );
    assert_eq!(
        (f.connection_limit, f.pool_per_replica),
        (Some(17), Some(3))
    );
    assert!(
        f.connection_limit_source.starts_with("max_connections 25"),
        "{}",
        f.connection_limit_source
    );
    assert_eq!(
        f.rows.last().map(|r| (r.replicas, r.surge, r.total)),
        Some((5, true, Some(15)))
    );
    // A cliff below the knee bounds it; HTTP has no server limit.
    let f = plan_fleet(
        Replicas {
            min: 2,
            max: 2,
            surge_pct: 0,
        },
        None,
        &capacity(Some(30), Some(16)),
        Some(14),
    );
    assert_eq!(
        (f.connection_limit, f.pool_per_replica),
        (Some(15), Some(7))
    );
}

#[test]
fn a_service_serving_n_at_once_gets_n_not_its_knee() {
    // A sharp curve: 24 at once, the knee (95% of the peak) at 22.
    let replicas = Replicas {
        min: 4,
        max: 4,
        surge_pct: 0,
    };
    let sharp = Capacity {
        serves_at_once: Some(24),
        ..capacity(Some(22), None)
    };
    let f = plan_fleet(replicas, None, &sharp, Some(22));
    assert_eq!(
        (f.connection_limit, f.pool_per_replica),
        (Some(24), Some(6))
    );
    assert!(
        f.connection_limit_source
            .starts_with("the service serves about 24 at a time"),
        "{}",
        f.connection_limit_source
    );
    // Not past its cliff: a service failing from 20 keeps 19.
    let failing = Capacity {
        serves_at_once: Some(24),
        ..capacity(Some(22), Some(20))
    };
    let f = plan_fleet(replicas, None, &failing, Some(18));
    assert_eq!(f.connection_limit, Some(19));
    // Below the knee, the knee stands.
    let wide = Capacity {
        serves_at_once: Some(10),
        ..capacity(Some(22), None)
    };
    assert_eq!(
        plan_fleet(replicas, None, &wide, Some(20)).connection_limit,
        Some(22)
    );
}

#[test]
fn an_overcommitted_fleet_is_a_finding_with_the_number_that_fits() {
    use poolbench_model::{TuneLoad, TuneRecommendation, TuneResult};
    let mut r = TuneResult::begin(
        "postgres://db/app".into(),
        TuneLoad::Concurrency(32),
        None,
        60.0,
        vec!["pool".into()],
    );
    r.recommendation = Some(TuneRecommendation {
        strategy: "pool".into(),
        spec: "pool:20".into(),
        pool_size: 20,
        throughput_rps: 1000.0,
        throughput_ci95: None,
        p99_us: 1000.0,
        cap: None,
        tied_with: Vec::new(),
        client_settings: Vec::new(),
        timeouts: None,
    });
    r.fleet = Some(plan_fleet(
        Replicas {
            min: 4,
            max: 4,
            surge_pct: 25,
        },
        Some(limit(50)),
        &Capacity::default(),
        None,
    ));
    // `conclude` reads it again with the capacity and the pick.
    let mut again = r.clone();
    poolbench_tune::conclude(&mut again, "postgres");
    let fleet = again.fleet.as_ref().unwrap();
    // No points: no pick survives; the server's 50 over 5 replicas.
    assert_eq!(fleet.pool_per_replica, Some(10));
    let f = plan_fleet(
        Replicas {
            min: 4,
            max: 4,
            surge_pct: 25,
        },
        Some(limit(50)),
        &Capacity::default(),
        Some(20),
    );
    // The pick carries the whole load: each of 4 replicas needs 20 / 4.
    assert_eq!(f.pool_per_replica, Some(5));
    let lines = poolbench_tune::fleet_overcommit_evidence(&f, Some(20));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("is 100 connections, over the fleet's connection limit of 50"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("set 5 per replica"), "{}", lines[0]);
    // Fifty-five replicas cannot each have one of 50.
    let f = plan_fleet(
        Replicas {
            min: 55,
            max: 55,
            surge_pct: 0,
        },
        Some(limit(50)),
        &Capacity::default(),
        Some(20),
    );
    let lines = poolbench_tune::fleet_overcommit_evidence(&f, Some(20));
    assert!(
        lines.iter().any(|l| l.contains("at most 50 replicas fit")),
        "{lines:?}"
    );
}
