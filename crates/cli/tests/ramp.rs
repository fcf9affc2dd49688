//! `--ramp`: concurrency that changes within one continuous run, the
//! connections kept. An `elastic:4+8` pool grows to 12 connections as the
//! ramp rises and shrinks back to 4 after the overflow grace once it falls;
//! the report names where throughput stopped growing and where p99 crossed
//! the SLO.
use crate::services;
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::Command;

fn run(args: &[&str]) -> (Value, String) {
    run_exiting(args, 0)
}

fn run_exiting(args: &[&str], code: i32) -> (Value, String) {
    let path = std::env::temp_dir().join(format!(
        "poolbench-ramp-{}-{}.json",
        std::process::id(),
        args.len()
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("run")
        .args(args)
        .args(["--quiet", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    (r, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn an_elastic_pool_grows_under_a_ramp_and_shrinks_after_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Up to 16 workers, held, down to 2, held past the 1 s overflow grace.
    let (r, text) = run(&[
        "-s",
        "elastic:4+8",
        "--ramp",
        "2..16/1500ms,16/1500ms,2/300ms,2/2700ms",
        "--warmup",
        "300ms",
    ]);
    let c = &r["cells"][0];
    assert_eq!(c["concurrency"], 16, "the cell runs the ramp's peak");
    assert_eq!(c["reps"], 1);
    let open: Vec<u64> = c["timeline"]["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let from = c["timeline"]["measure_from_bucket"].as_u64().unwrap() as usize;
    // 100 ms buckets: the high stage is 1.5 s to 3 s into the measurement.
    let high = open[from + 20..from + 30].iter().max().copied().unwrap();
    assert_eq!(high, 12, "{open:?}");
    let last = open[open.len() - 5..].iter().max().copied().unwrap();
    assert_eq!(last, 4, "{open:?}");
    // The same, second by second, in the ramp summary and the text.
    let seconds = c["ramp"]["seconds"].as_array().unwrap();
    assert_eq!(seconds.len(), 6);
    assert_eq!(seconds[2]["connections_open"], 12, "{seconds:?}");
    assert_eq!(seconds[5]["connections_open"], 4, "{seconds:?}");
    assert_eq!(seconds[5]["target"].as_f64().unwrap(), 2.0);
    assert!(seconds
        .iter()
        .all(|s| s["throughput_rps"].as_f64().unwrap() > 0.0));
    assert!(
        text.contains("ramp of elastic:4+8 (concurrency), second by second"),
        "{text}"
    );
    // The HTML report holds the same seconds, and the timeline draws the
    // connections open.
    let html = services::html_of(&r, "ramp-html");
    let table = html
        .split("<table class=\"ramp\">")
        .nth(1)
        .expect("a ramp table");
    let rows = table
        .split("</table>")
        .next()
        .unwrap()
        .matches("<tr>")
        .count();
    assert_eq!(rows, 1 + 6, "a header and six seconds");
    assert!(
        html.contains("<title>connections open (most 12)</title>"),
        "{html}"
    );
    // One continuous run: the overflow connections were opened once each,
    // not per stage (a fresh cell per stage would open them again).
    let opened = c["connections"]["opened"].as_u64().unwrap();
    assert!((12..=14).contains(&opened), "{opened} connections opened");
}

#[test]
fn the_report_names_where_throughput_stopped_and_p99_crossed_the_slo() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The server answers 4 requests at a time in 10 ms each: about 400
    // req/s from c=4 on; past that, requests queue and p99 grows with c.
    // The whole cell's p99 is over the bound too: exit 1, as any --slo.
    let (r, text) = run_exiting(
        &[
            "-s",
            "pool:40",
            "--ramp",
            "1..40/8s",
            "--warmup",
            "200ms",
            "--server-delay",
            "10ms",
            "--server-max-inflight",
            "4",
            "--slo",
            "p99<30ms",
        ],
        1,
    );
    let ramp = &r["cells"][0]["ramp"];
    let saturated = ramp["saturated_at"]
        .as_f64()
        .expect("throughput stopped growing");
    assert!((2.0..=16.0).contains(&saturated), "{ramp}");
    let crossed = ramp["slo_p99_crossed_at"]
        .as_f64()
        .expect("p99 crossed 30 ms");
    assert!(
        crossed >= saturated && (6.0..=40.0).contains(&crossed),
        "{ramp}"
    );
    assert!(text.contains("throughput stopped growing at c ≈"), "{text}");
    assert!(
        text.contains("p99 crossed the SLO's 30.0 ms at c ≈"),
        "{text}"
    );
}

#[test]
fn with_rate_the_ramp_is_of_the_rate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (r, text) = run(&[
        "-s",
        "pool:50",
        "--rate",
        "1",
        "--ramp",
        "200..2000/3s",
        "--max-inflight",
        "200",
        "--warmup",
        "300ms",
        "--server-delay",
        "2ms",
    ]);
    let c = &r["cells"][0];
    assert_eq!(c["concurrency"], 200, "the in-flight cap");
    let seconds = c["ramp"]["seconds"].as_array().unwrap();
    for (s, want) in seconds.iter().zip([500.0, 1100.0, 1700.0]) {
        let got = s["throughput_rps"].as_f64().unwrap();
        assert_eq!(s["target"].as_f64().unwrap(), want);
        assert!((got - want).abs() < 0.3 * want, "{seconds:?}");
    }
    assert!(text.contains("ramp of pool:50 (rate)"), "{text}");
}

#[test]
fn bad_ramps_are_refused_before_any_load() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    for (args, says) in [
        (vec!["--ramp", "1..x/1s"], "TO is not a number"),
        (vec!["--ramp", "1..10/1s", "-c", "5"], "cannot be used with"),
        (
            vec!["--ramp", "1..10/1s", "--batch", "5"],
            "cannot be used with",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .arg("run")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}
