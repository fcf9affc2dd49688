//! Service mode against real PostgreSQL and Redis (started by
//! scripts/test.sh): nested-checkout starvation and its fix, and the cache.

use crate::services::{pg_url, redis_url, run_json, Serve};
use crate::turns::ONE_AT_A_TIME;
use std::time::{Duration, Instant};

fn cell(result: &serde_json::Value) -> &serde_json::Value {
    &result["cells"][0]
}

fn finding_ids(result: &serde_json::Value) -> Vec<String> {
    result["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

fn load(url: &str, c: &str, duration: &str) -> serde_json::Value {
    run_json(&[
        "run",
        url,
        "-s",
        "pool:50",
        "-c",
        c,
        "-d",
        duration,
        "--warmup",
        "0s",
        "--threads",
        "2",
    ])
}

#[test]
fn nested_checkout_starves_a_small_pool_and_a_big_one_fixes_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let db = pg_url();
    let small = Serve::start(&[
        "--db",
        &db,
        "--db-pool",
        "5",
        "--db-overflow",
        "0",
        "--nested",
        "--db-timeout",
        "1s",
    ]);
    let started = Instant::now();
    let r = load(&small.url("/authors/42"), "50", "5s");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the run completes"
    );
    let c = cell(&r);
    let errors = c["errors"]["by_status"]["503"].as_u64().unwrap_or(0);
    assert!(
        errors > 0,
        "checkout timeouts answered 503: {}",
        c["errors"]
    );
    let db_pool = &c["server"]["db_pool"];
    assert!(db_pool["timeouts"].as_u64().unwrap() > 0, "{db_pool}");
    assert!(db_pool["nested_waits"].as_u64().unwrap() > 0, "{db_pool}");
    assert!(db_pool["peak_in_use"].as_u64().unwrap() <= 5, "{db_pool}");
    let ids = finding_ids(&r);
    assert!(
        ids.iter().any(|i| i == "nested-checkout-starvation"),
        "{ids:?}"
    );
    let starvation = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "nested-checkout-starvation")
        .unwrap();
    let evidence = starvation["evidence"][0].as_str().unwrap();
    assert!(
        evidence.contains("5+0 = 5 connections") && evidence.contains("= 51"),
        "{evidence}"
    );
    drop(small);

    let big = Serve::start(&[
        "--db",
        &db,
        "--db-pool",
        "60",
        "--db-overflow",
        "0",
        "--nested",
        // Room for a slow machine: beside another test lane, 10 of the
        // big pool's checkouts once waited past 1 s for PostgreSQL.
        "--db-timeout",
        "5s",
    ]);
    let r = load(&big.url("/authors/42"), "50", "3s");
    let c = cell(&r);
    assert_eq!(c["errors"]["total"], 0, "{}", c["errors"]);
    assert!(c["ok"].as_u64().unwrap() > 100);
    assert_eq!(c["server"]["db_pool"]["timeouts"], 0);
    assert!(!finding_ids(&r)
        .iter()
        .any(|i| i == "nested-checkout-starvation"));
}

#[test]
fn the_cache_makes_a_slow_database_at_least_one_and_a_half_times_faster() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let db = pg_url();
    let common = [
        "--db",
        &db,
        "--db-pool",
        "10",
        "--db-overflow",
        "0",
        "--db-delay",
        "5ms",
    ];
    let plain = Serve::start(&common);
    let mut with_cache: Vec<&str> = common.to_vec();
    let redis = redis_url();
    with_cache.extend(["--cache", &redis]);
    let cached = Serve::start(&with_cache);
    let rate = |s: &Serve| {
        let r = run_json(&[
            "run",
            &s.url("/authors/7"),
            "-s",
            "pool:10",
            "-c",
            "10",
            "-d",
            "2s",
            "--warmup",
            "300ms",
        ]);
        assert_eq!(cell(&r)["errors"]["total"], 0);
        (
            cell(&r)["throughput_rps"].as_f64().unwrap(),
            cell(&r)["server"]["db_pool"].clone(),
        )
    };
    let (without, _) = rate(&plain);
    let (with, pool) = rate(&cached);
    assert!(
        with >= 1.5 * without,
        "with the cache {with:.0} req/s, without {without:.0} req/s"
    );
    // Answered from Redis: a database checkout only for a miss (each
    // worker's first request, before the cache held the row), and the
    // misses under 1% of the answers.
    let count = |k: &str| pool[k].as_u64().unwrap_or_else(|| panic!("{k}: {pool}"));
    assert!(count("checkouts") <= count("cache_misses"), "{pool}");
    assert!(count("cache_misses") * 100 <= count("cache_hits"), "{pool}");
}
