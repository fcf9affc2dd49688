//! `tune`'s decisions on simulated services: the capacity search driven to
//! its end against a known curve finds the knee, the cliff and how many
//! the service serves at once; the pool search finds the smallest pool
//! within 5% of the best; the confirmation calls a tie a tie.
use poolbench_model::{
    InferenceId, Slo, TuneComparison, TuneLoad, TunePhase, TunePoint, TuneResult,
};
use poolbench_tune::{
    capacity, confirm_sizes, confirmed_pick, decide, disturbed, needs_round, next_level, next_pool,
    tie, verdicts, vet, CapacityLimits, PoolBounds, PoolStep,
};

/// A point of a service that works on `servers` requests at once, each
/// taking `service_ms`; past `freeze` in flight it answers nothing.
fn service(
    phase: TunePhase,
    in_flight: usize,
    pool: usize,
    servers: usize,
    service_ms: f64,
    freeze: Option<usize>,
) -> TunePoint {
    let busy = pool.min(in_flight).min(servers) as f64;
    let frozen = freeze.is_some_and(|f| pool.min(in_flight) > f);
    let x = if frozen {
        0.0
    } else {
        busy / (service_ms / 1000.0)
    };
    let mean_us = if x > 0.0 {
        in_flight as f64 / x * 1e6
    } else {
        0.0
    };
    TunePoint {
        phase,
        strategy: format!("pool:{pool}"),
        in_flight,
        pool_size: pool,
        rate: None,
        runs: 1,
        duration_s: 1.0,
        requests: (x as u64).max(if frozen { 0 } else { 1 }),
        errors: 0,
        error_rate: 0.0,
        errors_by_kind: Default::default(),
        throughput_rps: x,
        throughput_ci95: Some(0.02 * x),
        throughput_from_latency: false,
        p50_us: mean_us,
        p99_us: mean_us * 1.2,
        mean_us,
        checkout_wait_share: 0.0,
        stalled_s: if frozen { 1.0 } else { 0.0 },
        achieved_in_flight: in_flight as f64,
        generator_cpu: Some(0.3),
        hiccup_p99_us: 100.0,
        streams_allowed: None,
        checkout_wait_p999_us: None,
    }
}

/// The capacity search run to its end against the service.
fn search(servers: usize, freeze: Option<usize>, want: usize) -> Vec<TunePoint> {
    search_with(servers, freeze, want, None)
}

fn search_with(
    servers: usize,
    freeze: Option<usize>,
    want: usize,
    slo: Option<&Slo>,
) -> Vec<TunePoint> {
    let mut points = Vec::new();
    let limits = CapacityLimits {
        want,
        most: 4 * want,
    };
    for _ in 0..60 {
        match next_level(&points, slo, limits) {
            Some(n) => points.push(service(TunePhase::Capacity, n, n, servers, 20.0, freeze)),
            None => return points,
        }
    }
    panic!(
        "the search did not end: {:?}",
        points.iter().map(|p| p.in_flight).collect::<Vec<_>>()
    );
}

#[test]
fn the_capacity_search_finds_how_many_a_service_serves_at_once() {
    for servers in [3, 8, 24, 60] {
        let points = search(servers, None, 100);
        let cap = capacity(&points, None, false);
        let knee = cap.knee_in_flight.unwrap();
        assert!(
            knee >= servers * 95 / 100 && knee as f64 <= 1.1 * servers as f64 + 1.0,
            "{servers}: knee {knee}"
        );
        assert_eq!(cap.serves_at_once, Some(servers), "{cap:?}");
        assert!(cap.cliff_in_flight.is_none());
        assert!(points.len() <= 20, "{servers}: {} points", points.len());
    }
}

#[test]
fn the_capacity_search_finds_a_freeze_within_10_percent_and_says_no_serves_at_once_for_a_delayed_ack(
) {
    let points = search(100, Some(15), 40);
    let cap = capacity(&points, None, false);
    let cliff = cap.cliff_in_flight.expect("a cliff");
    assert!((16..=18).contains(&cliff), "cliff {cliff}");
    let why = cap.cliff_reason.unwrap();
    assert!(
        why.contains("no answer") || why.contains("stalled"),
        "{why}"
    );
    // A failing level is measured twice before it counts.
    assert_eq!(points.iter().filter(|p| p.in_flight == cliff).count(), 2);
    let plain = search(8, None, 32);
    assert!(capacity(&plain, None, true).serves_at_once.is_none());
}

#[test]
fn a_p99_bound_is_crossed_where_latency_passes_it() {
    let slo: Slo = "p99<50ms".parse().unwrap();
    let points = search_with(8, None, 64, Some(&slo));
    let cap = capacity(&points, Some(&slo), false);
    // p99 = 1.2 × in flight ÷ 400 req/s: over 50 ms from 17 in flight.
    let at = cap.slo_in_flight.expect("crossed");
    assert!((17..=19).contains(&at), "{at}");
}

/// One size compared with pool:64, round by round.
fn against_64(n: usize, ratios: &[f64]) -> TuneComparison {
    TuneComparison {
        phase: TunePhase::Pool,
        family: "pool".into(),
        pool_size: n,
        reference: 64,
        ratios: ratios.to_vec(),
        set_aside: None,
    }
}

/// One size compared with the reference (`rounds` rounds, each `ratio`).
fn compared(phase: TunePhase, n: usize, upper: usize, ratio: f64, rounds: usize) -> TuneComparison {
    TuneComparison {
        phase,
        family: "pool".into(),
        pool_size: n,
        reference: upper,
        ratios: vec![ratio; rounds],
        set_aside: None,
    }
}

#[test]
fn two_lucky_rounds_do_not_raise_the_line_for_every_size() {
    // nginx with the generator saturated: sizes 18 and 24 pair at 0.97
    // with 64; 33 reads 1.09 and 1.05 in its two rounds. Beating the
    // reference takes an interval above it by Student's t, not by the
    // normal interval two rounds cannot have.
    let mk = against_64;
    let comps = [
        mk(18, &[0.97, 0.975]),
        mk(24, &[0.98, 0.965]),
        mk(33, &[1.09, 1.05]),
    ];
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    let v = verdicts(&refs, &[]);
    assert!(v.iter().all(|v| v.good), "{v:?}");
    // Five rounds all well above: that does beat it.
    let comps = [
        mk(18, &[0.97, 0.975]),
        mk(33, &[1.1, 1.12, 1.09, 1.11, 1.1]),
    ];
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    let v = verdicts(&refs, &[]);
    assert!(!v[0].good && v[1].good, "{v:?}");
}

#[test]
fn the_pool_search_finds_the_smallest_pool_within_5_percent_of_the_reference() {
    let cases: [(usize, &[usize]); 7] = [
        (24, &[24]),
        (24, &[40]),
        (8, &[8, 8]),
        (50, &[20]),
        (1, &[4]),
        (30, &[]),
        (6, &[2, 6]),
    ];
    for (servers, guesses) in cases {
        let upper = 100;
        let x = |n: usize| n.min(servers) as f64;
        let bounds = PoolBounds {
            upper,
            guesses: guesses.to_vec(),
            least: 1,
        };
        let mut comps: Vec<TuneComparison> = Vec::new();
        let chosen = loop {
            let refs: Vec<&TuneComparison> = comps.iter().collect();
            match next_pool(&verdicts(&refs, &[]), &bounds) {
                PoolStep::Compare(n) => {
                    assert!(n < upper && !comps.iter().any(|c| c.pool_size == n), "{n}");
                    comps.push(compared(TunePhase::Pool, n, upper, x(n) / x(upper), 2));
                }
                PoolStep::Done(n) => break n,
            }
            assert!(
                comps.len() <= 9,
                "{servers}/{guesses:?}: {} comparisons",
                comps.len()
            );
        };
        // 95% of the reference: ceil(0.95 × servers); within 10% + 1 of it.
        let smallest = (0.95 * servers as f64).ceil() as usize;
        assert!(
            chosen >= smallest && chosen as f64 <= 1.1 * smallest as f64 + 1.0,
            "{servers}/{guesses:?}: {chosen}"
        );
        // A good guess is judged first, and the answer found in few steps.
        if guesses.first() == Some(&servers) {
            assert_eq!(comps[0].pool_size, servers);
            assert!(comps.len() <= 4, "{servers}: {} comparisons", comps.len());
        }
    }
}

#[test]
fn no_size_below_the_least_is_judged() {
    // 100 in flight, 10 streams a connection: 10 connections are the
    // least; 9 would leave 10 requests waiting in the client.
    let bounds = PoolBounds {
        upper: 100,
        guesses: vec![10],
        least: 10,
    };
    assert_eq!(next_pool(&[], &bounds), PoolStep::Compare(10));
    let comps = [compared(TunePhase::Pool, 10, 100, 1.0, 2)];
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    assert_eq!(
        next_pool(&verdicts(&refs, &[]), &bounds),
        PoolStep::Done(10)
    );
    // 10 short of the line: up from it, never below.
    let comps = [compared(TunePhase::Pool, 10, 100, 0.8, 2)];
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    match next_pool(&verdicts(&refs, &[]), &bounds) {
        PoolStep::Compare(n) => assert!(n > 10 && n < 100, "{n}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pick_counts_once_confirmed_and_over_all_its_rounds() {
    let comps = [
        compared(TunePhase::Pool, 4, 32, 0.97, 2),
        compared(TunePhase::Pool, 3, 32, 0.90, 2),
    ];
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    // Good in the search, but not confirmed yet.
    assert_eq!(confirmed_pick(&refs, &[]), None);
    let mut comps = comps.to_vec();
    comps.push(compared(TunePhase::Confirm, 4, 32, 0.96, 3));
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    assert_eq!(confirmed_pick(&refs, &[]).unwrap().pool_size, 4);
    // A size that broke the bounds in a run is never the pick.
    assert_eq!(confirmed_pick(&refs, &[4]), None);
    // The confirmation's rounds pull its verdict below the line.
    comps.push(compared(TunePhase::Confirm, 4, 32, 0.75, 3));
    let refs: Vec<&TuneComparison> = comps.iter().collect();
    let v = &verdicts(&refs, &[])[1];
    assert!(!v.good && v.rounds == 8, "{v:?}");
    // Noisy rounds: their mean decides, not how far their interval reaches
    // (1.1 and 0.8: 0.94×, short of the line; 1.1 and 0.85: 0.97×).
    let noisy = [
        compared(TunePhase::Pool, 8, 32, 1.1, 1),
        compared(TunePhase::Pool, 8, 32, 0.8, 1),
        compared(TunePhase::Pool, 9, 32, 1.1, 1),
        compared(TunePhase::Pool, 9, 32, 0.85, 1),
    ];
    let refs: Vec<&TuneComparison> = noisy.iter().collect();
    let good: Vec<bool> = verdicts(&refs, &[]).iter().map(|v| v.good).collect();
    assert_eq!(good, [false, true]);
    // A service that slows with more in flight (FastAPI at its defaults):
    // smaller sizes beat the reference 3×, and are judged against the best.
    let retro = [
        compared(TunePhase::Pool, 1, 15, 3.1, 2),
        compared(TunePhase::Pool, 2, 15, 3.7, 2),
        compared(TunePhase::Pool, 3, 15, 3.6, 2),
    ];
    let refs: Vec<&TuneComparison> = retro.iter().collect();
    let good: Vec<bool> = verdicts(&refs, &[]).iter().map(|v| v.good).collect();
    assert_eq!(good, [false, true, true]);
    // Near the line a comparison gets more rounds; far from it, two do.
    assert!(needs_round(&[0.96, 0.93], 4));
    assert!(!needs_round(&[0.6, 0.62], 4));
    assert!(!needs_round(&[0.96, 0.93, 0.95, 0.94], 4));
}

#[test]
fn the_confirmation_calls_a_tie_and_the_smaller_pool_wins_it() {
    assert_eq!(confirm_sizes(24, 100), vec![22, 24, 26]);
    assert_eq!(confirm_sizes(1, 100), vec![1, 2]);
    assert_eq!(confirm_sizes(10, 10), vec![9, 10]);
    let mut points: Vec<TunePoint> = [22, 24, 26]
        .map(|n| service(TunePhase::Confirm, 100, n, 24, 20.0, None))
        .to_vec();
    // 22 is 8% below: not within 5%. 24 and 26 are equal: a tie.
    let refs: Vec<&TunePoint> = points.iter().collect();
    let (w, tied) = decide(&refs, None, 0.5).unwrap();
    assert_eq!((w.pool_size, tied), (24, vec![26]));
    assert!(tie(&points[1], &points[2]) && !tie(&points[0], &points[1]));
    // Noise that puts 22 within 5% of the best: the smaller wins.
    points[0].throughput_rps = 0.96 * points[1].throughput_rps;
    let refs: Vec<&TunePoint> = points.iter().collect();
    assert_eq!(decide(&refs, None, 0.5).unwrap().0.pool_size, 22);
    // Intervals so wide they overlap at 63% of the best: not a tie.
    points[0].throughput_rps = 0.63 * points[1].throughput_rps;
    points[0].throughput_ci95 = Some(0.3 * points[0].throughput_rps);
    points[1].throughput_ci95 = Some(0.3 * points[1].throughput_rps);
    let refs: Vec<&TunePoint> = points.iter().collect();
    assert_eq!(decide(&refs, None, 0.5).unwrap().0.pool_size, 24);
}

#[test]
fn a_gradual_fall_is_retrograde_and_a_sudden_one_a_cliff() {
    // FastAPI with synchronous SQLAlchemy as measured: 800 req/s at 4 in
    // flight falling to 24% of that at 15, a step at a time.
    let curve = |xs: &[(usize, f64)]| -> Vec<TunePoint> {
        xs.iter()
            .map(|&(n, x)| {
                let mut p = service(TunePhase::Capacity, n, n, 100, 1.0, None);
                p.throughput_rps = x;
                p.mean_us = n as f64 / x * 1e6;
                p
            })
            .collect()
    };
    let gradual = curve(&[
        (1, 760.0),
        (4, 800.0),
        (8, 400.0),
        (11, 290.0),
        (14, 220.0),
        (15, 192.0),
    ]);
    let cap = capacity(&gradual, None, false);
    assert_eq!(cap.cliff_in_flight, None, "{cap:?}");
    assert_eq!(cap.retrograde_from, Some(8));
    let sudden = curve(&[(1, 760.0), (4, 800.0), (8, 780.0), (16, 150.0)]);
    assert_eq!(capacity(&sudden, None, false).cliff_in_flight, Some(16));
    let crawling = curve(&[(1, 760.0), (4, 800.0), (8, 400.0), (16, 210.0), (32, 70.0)]);
    assert_eq!(capacity(&crawling, None, false).cliff_in_flight, Some(32));
    // The same service on a slower machine (CI): a quarter of 4's at 8, a
    // hair above a quarter of the peak. Faster than contention falls, so a
    // cliff there, before 16 and 32 froze it for good.
    let steep = curve(&[(1, 703.0), (2, 748.0), (4, 775.0), (8, 194.6), (16, 137.7)]);
    let cap = capacity(&steep, None, false);
    assert_eq!(cap.cliff_in_flight, Some(8), "{cap:?}");
    assert!(cap.cliff_reason.unwrap().contains("collapsed to 25%"));
    // A level measured between does not hide it: 8 is a quarter of 4.
    let between = curve(&[(1, 678.0), (2, 747.0), (4, 701.5), (6, 349.5), (8, 175.2)]);
    assert_eq!(capacity(&between, None, false).cliff_in_flight, Some(8));
    // Half of the level under it is still contention.
    let halved = curve(&[(1, 700.0), (2, 760.0), (4, 780.0), (8, 330.0)]);
    assert_eq!(capacity(&halved, None, false).cliff_in_flight, None);
}

#[test]
fn rounds_that_read_far_under_a_smaller_size_or_with_a_fast_reference_are_set_aside() {
    // nginx at 64 in flight, the machine a third slower for the whole
    // search: pool:8 read 0.94× of pool:64, then pool:12 0.72× and 0.78×
    // with the reference 26% faster than in any other comparison.
    let mk = against_64;
    let eight = mk(8, &[0.99, 0.96, 0.91, 0.91]);
    let twelve = mk(12, &[0.72, 0.78]);
    let why = disturbed(&[&eight], &twelve, &[]).expect("under 0.85 of a smaller size");
    assert!(why.contains("with 8"), "{why}");
    // Under the line but not far under the smaller size: its own.
    assert!(disturbed(&[&eight], &mk(12, &[0.9, 0.92]), &[]).is_none());
    // The first comparison has no smaller size: the reference's readings
    // tell (the capacity search's 106k and 107k at 64, then 135k).
    let first = [106_470.0, 107_183.0, 135_515.0];
    let why = disturbed(&[], &twelve, &first).expect("the reference read fast");
    assert!(why.contains("1.26×"), "{why}");
    assert!(disturbed(&[], &twelve, &[106_470.0, 109_000.0]).is_none());
    // A size that read good whatever the reference did is its own.
    assert!(disturbed(&[], &mk(12, &[0.97, 0.96]), &first).is_none());
    // Set aside, the rounds no longer count.
    let again = mk(12, &[0.96, 0.97]);
    let aside = TuneComparison {
        set_aside: Some(why),
        ..twelve
    };
    let v = verdicts(&[&eight, &aside, &again], &[]);
    let v12 = v.iter().find(|v| v.pool_size == 12).unwrap();
    assert!(v12.good && v12.rounds == 2, "{v12:?}");
}

/// A point of `pool` connections at `in_flight` that carried `rps`.
fn carried(phase: TunePhase, pool: usize, in_flight: usize, rps: f64) -> TunePoint {
    let mut p = service(phase, in_flight, pool, pool, 1.0, None);
    p.throughput_rps = rps;
    p.requests = rps as u64;
    p
}

/// CI, PostgreSQL at c=8 beside two other test lanes: capacity 57,000
/// at 2 in flight, pool:8 71,000 in the pool search, then 28,000 in
/// its confirmation.
fn searched(pool_search_rps: f64) -> (TuneResult, TunePoint) {
    let mut r = TuneResult::begin(
        "postgres://db".into(),
        TuneLoad::Concurrency(8),
        None,
        25.0,
        vec!["pool".into()],
    );
    r.points = vec![
        carried(TunePhase::Capacity, 1, 1, 20_459.0),
        carried(TunePhase::Capacity, 2, 2, 56_968.0),
        carried(TunePhase::Pool, 5, 8, 59_471.0),
        carried(TunePhase::Pool, 8, 8, pool_search_rps),
        carried(TunePhase::Confirm, 8, 8, 28_121.0),
    ];
    r.capacity.max_rps = 56_968.0;
    r.capacity.max_rps_in_flight = 2;
    let pick = r.points[4].clone();
    (r, pick)
}

#[test]
fn a_pick_that_carried_the_load_in_another_run_is_not_refused_for_one_low_run() {
    let (r, pick) = searched(71_166.0);
    let said = vet(&r, &pick).unwrap().expect("the low run is explained");
    assert_eq!(said.id, InferenceId::SlowConfirmation);
    assert!(said.text.contains("28121 req/s"), "{}", said.text);
    assert!(said.text.contains("carried 71166"), "{}", said.text);
}

#[test]
fn a_run_that_carried_the_load_with_errors_explains_nothing() {
    let (mut r, pick) = searched(71_166.0);
    r.points[3].errors = 30_000;
    r.points[3].error_rate = 0.2;
    assert!(vet(&r, &pick).is_err());
}

#[test]
fn a_pick_above_half_the_peak_needs_no_explanation() {
    let (r, mut pick) = searched(71_166.0);
    pick.throughput_rps = 40_000.0;
    assert_eq!(vet(&r, &pick), Ok(None));
}

#[test]
fn a_pick_low_in_every_run_is_still_refused() {
    let (r, pick) = searched(27_000.0);
    let why = vet(&r, &pick).unwrap_err();
    assert!(why.contains("nothing explains it"), "{why}");
}
