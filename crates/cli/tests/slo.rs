//! `--slo`: each cell records the bounds it broke, the recommendation
//! picks only among cells that met them, and a run where none did exits 1
//! (its report and JSON still written). With `--stop-on-slo`, a strategy's
//! cells above two in a row that broke it are skipped, each with the reason.
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::Command;

fn run(slo: &str, out: &std::path::Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run", "-s", "pool:2", "-c", "1,16", "-d", "400ms", "--warmup", "0s",
        ])
        .args(["--quiet", "--server-delay", "2ms", "--slo", slo, "-o"])
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_slo_limits_the_recommendation_and_fails_the_run_when_nothing_meets_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let out = std::env::temp_dir().join(format!("poolbench-slo-{}.json", std::process::id()));
    // c=16 on 2 connections at 2 ms waits about 16 ms (median); c=1 does
    // not wait (the median, not the p99: a tail on a shared machine).
    let (code, err) = run("p50<8ms", &out);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(
        cells[0]["slo_breaches"].as_array().unwrap().len(),
        0,
        "{}",
        cells[0]
    );
    let broke = cells[1]["slo_breaches"][0].as_str().unwrap();
    assert!(broke.starts_with("p50 "), "{broke}");
    // Only c=1 met it: the recommendation looks there (where, one worker
    // against a 2 ms server, it may find the closed-loop ceiling and say so).
    match r["recommendation"]["concurrency"].as_u64() {
        Some(c) => assert_eq!(c, 1, "{}", r["recommendation"]),
        None => {
            let why = r["reason"].as_str().unwrap();
            assert!(why.contains("at c=1"), "{why}");
        }
    }

    let (code, err) = run("throughput>1000000", &out);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no cell meets the SLO"), "{err}");
    assert!(out.exists(), "the JSON is written all the same");
    let _ = std::fs::remove_file(&out);
}

/// `--stop-on-slo` against a server that serves one request at a time
/// for 2 ms: at most 500 req/s, so by Little's law c workers wait c × 2 ms
/// on average whatever the machine's speed. c=1 and c=2 take 2 to 4 ms,
/// far below p99 < 40 ms; c=32 and c=64 take 64 and 128 ms or more, so
/// they break it, and the cells above them are skipped, never run.
#[test]
fn stop_on_slo_skips_a_strategy_s_cells_above_two_that_broke_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = std::env::temp_dir().join(format!("poolbench-stop-on-slo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, md, html) = (dir.join("r.json"), dir.join("r.md"), dir.join("r.html"));
    let o = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", "-s", "pool:4", "-c", "1,2,32,64,128,256"])
        .args(["-d", "300ms", "--warmup", "100ms", "--quiet"])
        .args(["--server-delay", "2ms", "--server-max-inflight", "1"])
        .args(["--slo", "p99<40ms", "--stop-on-slo"])
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&md)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    // c=1 met the SLO; the skipped cells are no failures of their own.
    assert_eq!(o.status.code(), Some(0), "{err}\n{text}");

    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ran: Vec<u64> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(ran, [1, 2, 32, 64], "{}", r["cells"]);
    for c in &r["cells"].as_array().unwrap()[2..] {
        assert!(!c["slo_breaches"].as_array().unwrap().is_empty(), "{c}");
    }
    let reason = "pool:4 broke p99 < 40.0 ms at c=32 and c=64";
    let skipped = r["skipped"].as_array().unwrap();
    let levels: Vec<u64> = skipped
        .iter()
        .map(|s| s["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [128, 256], "{}", r["skipped"]);
    for s in skipped {
        assert_eq!(s["strategy"], "pool:4", "{s}");
        assert_eq!(s["pool_size"], 4, "{s}");
        assert_eq!(s["reason"], reason, "{s}");
    }

    // The schema describes the new list, and the result meets it.
    let schema = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("schema")
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert!(schema["properties"]["skipped"].is_object(), "{schema}");
    assert!(jsonschema::is_valid(&schema, &r));

    // Each report says what was skipped and why.
    let line = format!("{reason}: skipped c=128, c=256");
    assert!(
        text.contains("SKIPPED by --stop-on-slo: 2 of 6 cells not run"),
        "{text}"
    );
    assert!(text.contains(&line), "{text}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains(&format!("- {line}")), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    let escaped = line.replace('<', "&lt;");
    assert!(html.contains(&format!("<li>{escaped}</li>")), "{html}");
    let _ = std::fs::remove_dir_all(&dir);
}
