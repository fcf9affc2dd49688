//! The pool search's answers on simulated services (tune_loop.rs's
//! simulation): how many it picks through noise (serves 2 at once, streams
//! capped at 10, retrograde, plateaus), a plateau reached gradually and the
//! sizes near its 5% line named, a budget spent before a smaller size is
//! confirmed, and the `pipeline` family searched or skipped.
use crate::tune_loop::{fastapi, trail, tune, tune_seeded, tune_skipping, tune_within, Service};
use poolbench_model::{InferenceId, TuneResult};
use std::time::Duration;

/// Pool sizes the pool search and its confirmation compared, and its pick.
fn pool_trail(r: &TuneResult) -> (Vec<usize>, Option<usize>) {
    let sizes = r.comparisons.iter().map(|c| c.pool_size).collect();
    (sizes, r.recommendation.as_ref().map(|x| x.pool_size))
}

/// Three searches with different noise: every pick within `ok`, the
/// picks within 10% (+1) of each other, at most `most` comparisons each.
fn three_picks(service: Service, c: usize, families: &[&str], ok: (usize, usize), most: usize) {
    let mut picks = Vec::new();
    for seed in [1u64, 0xdead_beef, 0x1234_5678_9abc] {
        let r = tune_seeded(service.clone(), c, families, Duration::from_secs(60), seed);
        let (sizes, pick) = pool_trail(&r);
        let pick = pick.unwrap_or_else(|| panic!("{:?}\n{}", r.reason, trail(&r)));
        assert!(
            (ok.0..=ok.1).contains(&pick) && sizes.len() <= most,
            "seed {seed}: picked {pick} after {sizes:?}\n{:?}\n{}",
            r.capacity,
            trail(&r)
        );
        picks.push(pick);
    }
    let (lo, hi) = (picks.iter().min().unwrap(), picks.iter().max().unwrap());
    assert!(*hi as f64 <= 1.1 * *lo as f64 + 1.0, "picks {picks:?}");
}

#[test]
fn a_service_that_serves_2_at_once_gets_2_or_3_connections_through_noise() {
    // 2 at a time, 1 ms each; each run off by up to 8%, the machine
    // drifting 25% over 20 s: unpaired, one point against another, it
    // reads a drift as a difference.
    let service = Service {
        noise: 0.08,
        drift: 0.25,
        ..Service::new(2, 1.0)
    };
    three_picks(service, 32, &["pool"], (2, 3), 8);
}

#[test]
fn a_service_slower_past_its_peak_is_compared_with_its_peak_not_its_worst() {
    // FastAPI's shape: 2 at once, slower with every request past 2 (a
    // blocked event loop), frozen past 15. Against the worst size below
    // the freeze every size looks 2-4x better, and noise then decides.
    let service = Service {
        retrograde: Some((2, 0.25)),
        noise: 0.08,
        drift: 0.2,
        ..fastapi()
    };
    three_picks(service.clone(), 50, &["pool"], (2, 3), 8);
    let r = tune(service, 50, &["pool"], Duration::from_secs(60));
    let reference = r.comparisons.iter().map(|c| c.reference).max();
    assert!(
        reference.is_some_and(|n| n <= 3),
        "{:?}\n{}",
        r.comparisons,
        trail(&r)
    );
}

#[test]
fn a_server_allowing_10_streams_a_connection_gets_the_load_over_10_connections() {
    // grpc-go with MaxConcurrentStreams(10), 2 ms a request, 100 at once.
    let service = Service {
        streams: Some(10),
        noise: 0.05,
        drift: 0.2,
        ..Service::new(100, 2.0)
    };
    three_picks(service, 100, &["round-robin"], (10, 12), 8);
    let r = tune(
        Service {
            streams: Some(10),
            ..Service::new(100, 2.0)
        },
        100,
        &["round-robin"],
        Duration::from_secs(60),
    );
    // The first size compared is the load over the server's streams.
    assert_eq!(r.comparisons[0].pool_size, 10, "{:?}", pool_trail(&r));
}

#[test]
fn a_plateau_from_6_to_400_in_flight_gets_about_6() {
    let service = Service {
        noise: 0.05,
        drift: 0.2,
        ..Service::new(6, 5.0)
    };
    // The drift fools the capacity search (its knee lands far above 6), so
    // the pool search halves down from 400.
    three_picks(service, 400, &["pool"], (6, 7), 10);
}

/// The picks of `seeds` searches of `service` at `c` in flight (60 s
/// each, one noise per seed), each asserted within `ok`.
fn picks_within(
    service: &Service,
    c: usize,
    seeds: u64,
    ok: std::ops::RangeInclusive<usize>,
) -> Vec<usize> {
    (1..=seeds)
        .map(|seed| {
            let r = tune_seeded(
                service.clone(),
                c,
                &["pool"],
                Duration::from_secs(60),
                seed * 0x9e37_79b9,
            );
            let (sizes, pick) = pool_trail(&r);
            let pick = pick.unwrap_or_else(|| panic!("seed {seed}: {:?}\n{}", r.reason, trail(&r)));
            assert!(
                ok.contains(&pick),
                "seed {seed}: picked {pick} after {sizes:?}\n{}",
                trail(&r)
            );
            pick
        })
        .collect()
}

#[test]
fn a_plateau_reached_gradually_gets_near_its_smallest_size_within_5_percent() {
    // nginx's shape on 2 shared cores: throughput 200k × (1 − e^(−n/6.7))
    // with n connections, 95% of it from n = 21 (0.9 from 16); each run off
    // by up to 5%, the machine drifting 20%. The bound, ≤ 1.1 × 21
    // + 1 = 24 and ≥ 0.9 of the best, for 18 of 20 seeds; none past 32.
    let service = Service {
        noise: 0.05,
        drift: 0.2,
        soft: Some(6.7),
        ..Service::new(200, 1.0)
    };
    let picks = picks_within(&service, 64, 20, 16..=32);
    let within = picks.iter().filter(|&&p| (16..=24).contains(&p)).count();
    assert!(within >= 18, "picks {picks:?}");
}

#[test]
fn a_plateau_that_sags_at_the_clients_load_is_judged_against_its_peak() {
    // nginx at c=100 on 2 shared cores: the gradual plateau, and past 32
    // connections each more costs 0.2% (0.94× of the peak at 64, 0.88× at
    // 100: a sag, not the fall below 0.9 of the peak the capacity search
    // names retrograde). Within 5% of the peak from 21; within 5% of the
    // load's 0.88× from 13, which a grid reads at 0.86× of its best. The
    // peak, compared with the load in paired rounds, carries about 1.13×
    // of it and becomes the reference (picks 17 to 23 over these seeds;
    // 12 to 14 against the load).
    let service = Service {
        noise: 0.05,
        soft: Some(6.7),
        retrograde: Some((32, 0.002)),
        ..Service::new(200, 1.0)
    };
    let picks = picks_within(&service, 100, 10, 16..=32);
    let within = picks.iter().filter(|&&p| (18..=24).contains(&p)).count();
    assert!(within >= 8, "picks {picks:?}");
}

/// The gradual plateau (throughput 200k × (1 − e^(−n/6.7)) with n
/// connections; each run off by up to 10%, the machine drifting 20%) at
/// c=64, searched by 8 seeds with budgets of 20 to 60 s: (seed, budget in
/// seconds, result).
fn short_budgets_on_a_gradual_plateau() -> impl Iterator<Item = (u64, u64, TuneResult)> {
    let service = Service {
        noise: 0.1,
        drift: 0.2,
        soft: Some(6.7),
        ..Service::new(200, 1.0)
    };
    (1..=8u64)
        .flat_map(|s| (4..=12u64).map(move |b| (s, 5 * b)))
        .map(move |(seed, secs)| {
            let r = tune_within(
                service.clone(),
                (64, &["pool"]),
                Duration::from_secs(60),
                seed * 0x9e37_79b9,
                Duration::from_secs(secs),
            );
            (seed, secs, r)
        })
}

#[test]
fn a_budget_spent_before_a_smaller_size_is_confirmed_answers_the_reference() {
    // The gradual plateau again, with budgets too short to finish the
    // pool search: once sizes were compared with the reference, the
    // answer is the reference (healthy in every round), said to be so,
    // never "no pool meets the bounds" for a healthy service.
    let mut referenced = 0;
    for (seed, secs, r) in short_budgets_on_a_gradual_plateau() {
        if r.comparisons.is_empty() {
            continue;
        }
        let pick = r.recommendation.as_ref().unwrap_or_else(|| {
            panic!(
                "seed {seed}, {secs} s: no answer: {:?}\n{}",
                r.reason,
                trail(&r)
            )
        });
        let smaller = r.comparisons.iter().any(|c| c.pool_size < c.reference);
        if pick.pool_size == 64 && smaller {
            referenced += 1;
            let note = r
                .inferences
                .iter()
                .find(|i| i.id == InferenceId::ReferenceAnswer);
            let note = note.unwrap_or_else(|| panic!("{secs} s: the reference unexplained"));
            let closest = r.comparisons.iter().filter(|c| c.pool_size < 64);
            assert!(
                closest
                    .clone()
                    .any(|c| note.text.contains(&format!(" {},", c.pool_size))),
                "{secs} s: {}",
                note.text
            );
        }
    }
    assert!(referenced >= 1, "no budget ended on the reference");
}

#[test]
fn a_pipeline_is_searched_over_its_connections_and_the_fewest_win_a_tie() {
    // HTTP/1.1 answers one request at a time per connection: against a
    // service serving 24 at once, 23-24 connections each with ⌈64 ÷ n⌉
    // written ahead carry what pool:24 carries; a tie, the fewer win.
    let families = ["pool", "pipeline"];
    let r = tune(
        Service::new(24, 20.0),
        64,
        &families,
        Duration::from_secs(60),
    );
    let found = |f: &str| r.families_found.iter().find(|a| a.family == f).cloned();
    let pipe = found("pipeline").and_then(|a| a.pool_size);
    let pipe = pipe.unwrap_or_else(|| panic!("{:?}\n{}", r.families_found, trail(&r)));
    assert!((23..=27).contains(&pipe), "pipeline {pipe}\n{}", trail(&r));
    let rec = r.recommendation.as_ref().expect("an answer");
    assert!(rec.pool_size <= 27, "{}", rec.spec);
    if rec.strategy == "pipeline" {
        let d = 64usize.div_ceil(rec.pool_size);
        assert_eq!(rec.spec, format!("pipeline:{}x{d}", rec.pool_size));
        let setting = format!("max_pipeline_size, {d}");
        assert!(rec
            .client_settings
            .iter()
            .any(|s| s.setting.contains(&setting)));
    }
    // Every pipeline point had a window place for each of the client's
    // requests, and no more windows than that needs.
    for p in r
        .points
        .iter()
        .filter(|p| p.strategy.starts_with("pipeline:"))
    {
        let (n, d) = p.strategy["pipeline:".len()..].split_once('x').unwrap();
        let (n, d): (usize, usize) = (n.parse().unwrap(), d.parse().unwrap());
        assert!(n * d >= 64 && n * (d - 1) < 64, "{}", p.strategy);
    }
}

#[test]
fn a_family_skipped_before_the_search_keeps_its_reason_and_the_others_answer() {
    let why = "the server does not answer pipelined requests (closed after 1 of 16)";
    let families = ["pool", "pipeline"];
    let r = tune_skipping(Service::new(24, 20.0), 64, &families, &[("pipeline", why)]);
    let pipe = r.families_found.iter().find(|a| a.family == "pipeline");
    let pipe = pipe.expect("the pipeline family answered");
    assert_eq!(pipe.pool_size, None);
    assert_eq!(pipe.reason.as_deref(), Some(why));
    assert!(!r.points.iter().any(|p| p.strategy.starts_with("pipeline")));
    let rec = r.recommendation.as_ref().expect("pool answers");
    assert_eq!(rec.strategy, "pool");
}

#[test]
fn every_family_skipped_loads_nothing_and_says_each_reason() {
    let why = "the server does not answer pipelined requests (closed after 1 answer)";
    let r = tune_skipping(
        Service::new(24, 20.0),
        64,
        &["pipeline"],
        &[("pipeline", why)],
    );
    assert!(r.points.is_empty(), "{}", trail(&r));
    assert!(r.recommendation.is_none());
    let reason = r.reason.as_deref().unwrap_or_default();
    assert!(reason.contains(why), "{reason}");
}

/// The sizes `pick-near-line` names, where tune said it.
fn near_line(r: &TuneResult) -> Option<(usize, usize)> {
    let i = r
        .inferences
        .iter()
        .find(|i| i.id == InferenceId::PickNearLine)?;
    let rest = i.text.split("sizes from ").nth(1)?;
    let mut words = rest.split(' ');
    let lo = words.next()?.parse().ok()?;
    let hi = words.nth(1)?.parse().ok()?;
    Some((lo, hi))
}

#[test]
fn a_gradual_plateau_names_the_sizes_near_the_line_and_a_steep_knee_does_not() {
    // The gradual plateau above: its smallest size within 5% is 21, with
    // 0.93× of the best at 18 and 0.97× at 24, so noise moves the pick
    // (19 to 28 over these seeds). Where tune says so, the sizes it names
    // hold the pick, and in most searches the true 21 too. A knee at 2
    // (0.5× at 1, 1.0× from 2) leaves nothing near the line but 2 and 3.
    let gradual = Service {
        noise: 0.05,
        drift: 0.2,
        soft: Some(6.7),
        ..Service::new(200, 1.0)
    };
    let steep = Service {
        noise: 0.08,
        drift: 0.25,
        ..Service::new(2, 1.0)
    };
    let mut holds_21 = 0;
    for seed in 1..=10u64 {
        let seed = seed * 0x9e37_79b9;
        let r = tune_seeded(
            gradual.clone(),
            64,
            &["pool"],
            Duration::from_secs(60),
            seed,
        );
        let pick = pool_trail(&r).1.expect("a pick");
        if let Some((lo, hi)) = near_line(&r) {
            assert!(
                lo < hi && (lo..=hi).contains(&pick),
                "seed {seed}: {lo}..{hi}, pick {pick}\n{}",
                trail(&r)
            );
            holds_21 += usize::from((lo..=hi).contains(&21));
        }
        let r = tune_seeded(steep.clone(), 32, &["pool"], Duration::from_secs(60), seed);
        if let Some((lo, hi)) = near_line(&r) {
            assert!(lo >= 2 && hi <= 3, "seed {seed}: {lo}..{hi}\n{}", trail(&r));
        }
    }
    assert!(
        holds_21 >= 5,
        "the sizes named held 21 in {holds_21} of 10 searches"
    );
}

#[test]
fn a_reference_run_fast_by_chance_does_not_send_the_search_up() {
    // A plateau whose smallest size within 5% is 9 (200 × (1 − e^(−n/3))),
    // at c=64; the machine 30% faster for 5 s, on the reference's runs
    // only (in a comparison's rounds, A B then B A, its two halves run
    // back to back). Such rounds read the size under the line; then the
    // search climbed above a bad size that was never bad. Set aside and
    // compared again, the picks stay within 1.1 × 9 + 1 in all but 3 of 60
    // placements of the burst (without it: 6 of 60 past, picks of 12 and
    // 15). The 3 are bursts over the first two comparisons, 9's and 14's:
    // no smaller size read before them, and the reference has no usual yet.
    let mut past = Vec::new();
    let mut set_aside = 0;
    for second in 10..70u64 {
        let service = Service {
            soft: Some(3.0),
            burst: Some((Duration::from_secs(second), Duration::from_secs(5), 1.3)),
            ..Service::new(200, 1.0)
        };
        let r = tune_seeded(service, 64, &["pool"], Duration::from_secs(60), 7);
        let (sizes, pick) = pool_trail(&r);
        let pick = pick.unwrap_or_else(|| panic!("burst at {second} s: {:?}", r.reason));
        set_aside += r
            .comparisons
            .iter()
            .filter(|c| c.set_aside.is_some())
            .count();
        if pick > 10 {
            past.push((second, pick, sizes));
        }
    }
    assert!(past.len() <= 3, "{} past 10: {past:?}", past.len());
    assert!(set_aside >= 10, "set aside {set_aside} times");
}

#[test]
fn a_budget_spent_with_sizes_near_the_line_answers_the_largest_of_them() {
    // The gradual plateau of the test above (95% of the best from about
    // 20 connections): where no size was confirmed but some read within
    // 2% of the 5% line or above it over their rounds, the largest of them
    // is answered, said to be unconfirmed, and it carries at least 0.9x of
    // what the reference carries (64, or a knee the noise placed lower);
    // not 64, five times what the service uses.
    let share = |n: usize| 1.0 - (-(n as f64) / 6.7).exp();
    let mut unconfirmed = Vec::new();
    for (seed, secs, r) in short_budgets_on_a_gradual_plateau() {
        let Some(pick) = r.recommendation.as_ref() else {
            continue;
        };
        let note = r
            .inferences
            .iter()
            .find(|i| i.id == InferenceId::PickNearLine && i.text.contains("answered unconfirmed"));
        if let Some(note) = note {
            assert!(pick.pool_size < 64, "{}", note.text);
            assert!(
                note.text.starts_with(&format!("pool:{} ", pick.pool_size)),
                "{}",
                note.text
            );
            let reference = r.comparisons.last().map_or(64, |c| c.reference);
            assert!(
                share(pick.pool_size) >= 0.9 * share(reference),
                "seed {seed}, {secs} s: pool:{} carries {:.2}x of pool:{reference}\n{}",
                pick.pool_size,
                share(pick.pool_size) / share(reference),
                trail(&r)
            );
            unconfirmed.push(pick.pool_size);
        }
    }
    eprintln!("unconfirmed picks: {unconfirmed:?}");
    assert!(
        !unconfirmed.is_empty(),
        "no budget ended with an unconfirmed pick"
    );
}
