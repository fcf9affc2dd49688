//! `poolbench tune --find-rate` end to end on the built-in server: the
//! answer's fields, the JSON against its schema, `report` in every
//! format, the exit codes (0 with a rate, 1 without, 2 for bad input
//! before any load). These prove the wiring; what the search decides is
//! tested on simulated queues (crates/tune/tests/rate.rs), and how close
//! its answers come to a brute-force sweep is bench/find-rate.sh.
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::{Command, Output};

fn poolbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .expect("poolbench runs")
}

/// `tune --find-rate ARGS --format json --quiet`, exiting with `code`.
fn find_rate(args: &[&str], code: i32) -> Value {
    let mut all = vec!["tune", "--find-rate", "--format", "json", "--quiet"];
    all.extend_from_slice(args);
    let out = poolbench(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("JSON: {e}: {stderr}"))
}

#[test]
fn find_rate_on_the_built_in_server_answers_with_every_field_and_renders_again() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = std::env::temp_dir().join(format!("poolbench-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("rate.json");
    let page = dir.join("rate.html");
    // Four at once, 20 ms each: 200 req/s at most.
    let r = find_rate(
        &[
            "--server-delay",
            "20ms",
            "--server-max-inflight",
            "4",
            "--slo",
            "p99<200ms",
            "--hold",
            "1s",
            "--budget",
            "25s",
            "-o",
            saved.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        0,
    );
    let schema: Value =
        serde_json::from_slice(&poolbench(&["schema", "rate"]).stdout).expect("a schema");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    assert!(
        validator.is_valid(&r),
        "the result fits `poolbench schema rate`"
    );
    let found = &r["found"];
    for key in [
        "rate_rps",
        "fails_at_rps",
        "held",
        "repetitions",
        "completed_rps",
        "p99_us",
        "in_flight_needed",
        "connections",
        "summary",
    ] {
        assert!(!found[key].is_null(), "found.{key}: {found}");
    }
    let rate = found["rate_rps"].as_f64().unwrap();
    assert!(
        rate > 0.0 && rate <= 210.0,
        "{rate} req/s over a 200 req/s server"
    );
    let points = r["rate_points"].as_array().unwrap();
    assert!(points.iter().any(|p| p["verdict"] == "holds"));
    assert!(
        points.iter().any(|p| p["verdict"] != "holds"),
        "nothing failed"
    );
    // A hang guard only: the budget is the search's to keep (tested on
    // simulated queues); a slow machine may add a point's overrun.
    assert!(r["elapsed_s"].as_f64().unwrap() <= 3.0 * 25.0);
    assert!(r["target"].as_str().unwrap().starts_with("built-in server"));
    for format in ["text", "markdown", "html"] {
        let out = poolbench(&["report", saved.to_str().unwrap(), "--format", format]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "report --format {format}");
        assert!(
            text.contains("holds") && text.contains("req/s"),
            "{format}: {text}"
        );
    }
    // The page, in a real browser: the answer, both curves, a dot per
    // point marked with its verdict, the SLO's line.
    let dom = crate::browser::dump_dom(&page);
    assert!(
        dom.contains("id=\"answer\"") && dom.contains("holds"),
        "no answer"
    );
    assert_eq!(dom.matches("<svg class=\"chart").count(), 2);
    assert_eq!(dom.matches("class=\"point\"").count(), 2 * points.len());
    assert!(dom.contains("data-verdict=\"holds\"") && dom.contains("class=\"slo\""));
    let again: Value = serde_json::from_slice(
        &poolbench(&["report", saved.to_str().unwrap(), "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(again["found"], r["found"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_slo_no_rate_holds_exits_1_with_the_reason() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // One request alone takes 20 ms: no rate holds p99 < 5 ms.
    let r = find_rate(
        &[
            "--server-delay",
            "20ms",
            "--slo",
            "p99<5ms",
            "--hold",
            "1s",
            "--budget",
            "20s",
        ],
        1,
    );
    assert!(r["found"].is_null());
    let why = r["reason"].as_str().unwrap();
    assert!(why.starts_with("no rate holds p99 < 5.0 ms"), "{why}");
}

#[test]
fn find_rate_refuses_bad_input_before_any_load() {
    for (args, says) in [
        (vec!["tune", "--find-rate"], "--find-rate needs the SLO"),
        (
            vec!["tune", "--find-rate", "--slo", "throughput>100"],
            "finds the rate itself",
        ),
        (
            vec!["tune", "--find-rate", "--slo", "p99<5ms", "-s", "pipeline"],
            "pipeline",
        ),
        (
            vec![
                "tune",
                "--find-rate",
                "--slo",
                "p99<5ms",
                "-s",
                "pool,shared",
            ],
            "one strategy",
        ),
        (vec!["tune", "-c", "4", "--hold", "2s"], "--find-rate"),
        (
            vec!["tune", "--find-rate", "--slo", "p99<5ms", "--replicas", "4"],
            "--replicas",
        ),
        (
            vec!["tune", "-c", "4", "--slo", "p90<5ms"],
            "p90 and p99.9 bounds",
        ),
        (
            vec![
                "tune",
                "http://127.0.0.1:1/",
                "--find-rate",
                "--slo",
                "p99<5ms",
            ],
            "127.0.0.1:1",
        ),
        (
            vec!["tune", "--find-rate", "--slo", "p99<5ms", "-o", "x.csv"],
            "x.csv",
        ),
    ] {
        let out = poolbench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
