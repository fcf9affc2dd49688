//! `tune --replicas` end to end: the pool per replica within the
//! service's knee (the built-in server, four replicas) with the division
//! run as four processes, and within the server's own limit (PostgreSQL
//! with `max_connections` 20, read from it: 17 for the fleet, six replicas
//! at the surge's worst). These prove the wiring — the limit read, the
//! rows, the run, the text and HTML — with short budgets; the division's
//! arithmetic is crates/tune/tests/fleet.rs. Each search loads the
//! machine, so each takes its turn.
use crate::services::{pg_execute, tune_json, tune_trail as trail, OwnPostgres};
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::Command;

fn tune(args: &[&str]) -> Value {
    tune_json(args, &[0]).0
}

fn replicas(fleet: &Value) -> Vec<u64> {
    fleet["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["replicas"].as_u64().unwrap())
        .collect()
}

#[test]
fn four_replicas_of_a_service_serving_24_get_about_6_each() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let r = tune(&[
        "-c",
        "48",
        "--server-max-inflight",
        "24",
        "--server-delay",
        "20ms",
        "--replicas",
        "4",
        "--surge",
        "0",
        "--budget",
        "30s",
        "--threads",
        "1",
        "--no-idle-probe",
    ]);
    let fleet = &r["fleet"];
    let pool = fleet["pool_per_replica"]
        .as_u64()
        .unwrap_or_else(|| panic!("{fleet}\n{}", trail(&r)));
    assert!(pool >= 1, "{fleet}");
    assert!(
        fleet["server_limit"].is_null(),
        "HTTP has no server limit: {fleet}"
    );
    // The fleet's connection limit is the knee, where the search found one.
    let limit = fleet["connection_limit"].as_u64().unwrap_or(u64::MAX);
    assert!(pool * 4 <= limit, "{fleet}");
    assert_eq!(replicas(fleet), [4]);
    // A single-process pick that four replicas would overrun is named,
    // with the pool that fits.
    let single = r["recommendation"]["pool_size"].as_u64().unwrap();
    let over = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "fleet-overcommit");
    if single.saturating_mul(4) > limit {
        let over = over.unwrap_or_else(|| panic!("no fleet-overcommit: {}", r["findings"]));
        let line = over["evidence"][0].as_str().unwrap();
        assert!(line.contains(&format!("set {pool} per replica")), "{line}");
    }
    // The division run: four processes of the per-replica pool at once,
    // against one process with the whole pick (whether it holds is the
    // machine's to say: bench/tune-accuracy.sh).
    let run = &r["fleet_check"];
    assert_eq!(run["replicas"], 4, "{run}");
    assert_eq!(run["replica_strategy"], format!("pool:{pool}"), "{run}");
    assert_eq!(run["rounds"].as_array().unwrap().len(), 2, "{run}");
    assert!(num(&run["throughput_ratio"]) > 0.0, "{run}");
    assert!(run["holds"].is_boolean(), "{run}");
    // The text and the HTML read again from the saved result say the same.
    let text = report(&r, "text");
    assert!(text.contains("Fleet (--replicas):"), "{text}");
    assert!(
        text.contains(&format!("pool size {pool} in each replica")),
        "{text}"
    );
    assert!(text.contains("The fleet, run: 4 processes"), "{text}");
    let html = report(&r, "html");
    assert!(html.contains("id=\"fleet-rows\"") && html.contains("id=\"fleet\""));
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// A result saved and rendered by `poolbench report --format FORMAT`.
fn report(r: &Value, format: &str) -> String {
    let saved = std::env::temp_dir().join(format!("poolbench-fleet-{}.json", std::process::id()));
    std::fs::write(&saved, r.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["report", "--format", format])
        .arg(&saved)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&saved);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn postgres_s_own_limit_divides_among_the_replicas_and_their_surge() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let pg = OwnPostgres::start("fleet-pg");
    pg_execute(&pg.url, "ALTER SYSTEM SET max_connections = 20");
    pg.stop();
    pg.restart();
    // Exit 1 too: on a busy machine the vetting may refuse the pick (a
    // pool far under the service's own rate, nothing to explain it); the
    // limit is read, and the fleet divided, all the same.
    let (r, _) = tune_json(
        &[
            &pg.url,
            "--query",
            "SELECT pg_sleep(0.01)",
            "-c",
            "16",
            "--max-pool",
            "16",
            "--replicas",
            "2..4",
            "--surge",
            "50",
            "--budget",
            "20s",
            "--threads",
            "1",
            "--no-idle-probe",
        ],
        &[0, 1],
    );
    let fleet = &r["fleet"];
    let limit = &fleet["server_limit"];
    assert_eq!(limit["server"], "postgresql", "{limit}");
    assert_eq!(limit["max_connections"], 20, "{limit}");
    // 20 − 3 reserved, nothing else connected: 17, read within 10%.
    let left = limit["connections"].as_u64().unwrap();
    assert!((16..=17).contains(&left), "{limit}");
    // Up to ⌈4 × 1.5⌉ = 6 replicas at once.
    assert_eq!(replicas(fleet), [2, 3, 4, 6], "{fleet}");
    if r["recommendation"].is_null() {
        assert!(r["reason"].as_str().is_some_and(|w| !w.is_empty()));
        return;
    }
    let pool = fleet["pool_per_replica"]
        .as_u64()
        .unwrap_or_else(|| panic!("{fleet}"));
    let most = fleet["connection_limit"]
        .as_u64()
        .unwrap_or_else(|| panic!("{fleet}"));
    assert!((1..=left).contains(&most), "{fleet}");
    assert!(pool >= 1 && pool * 6 <= most, "{fleet}");
    let surge = fleet["rows"].as_array().unwrap().last().unwrap();
    assert_eq!(surge["surge"], true);
    assert_eq!(surge["within_limit"], true, "{fleet}");
}
