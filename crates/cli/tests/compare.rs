//! `poolbench compare`: a server made slower shows a significant drop that
//! `--fail-if` turns into exit 1; two runs of the same build cross no bound.
use crate::turns::ONE_AT_A_TIME;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

/// A 3-rep run of one cell on the built-in server with this delay.
pub(crate) fn result(name: &str, delay: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("poolbench-cmp-{name}-{}.json", std::process::id()));
    let out = bin()
        .args([
            "run", "-s", "pool:4", "-c", "4", "-d", "300ms", "--warmup", "100ms",
        ])
        .args(["--reps", "3", "--quiet", "--server-delay", delay, "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

#[test]
fn a_slower_server_is_a_significant_drop_and_fails_the_bound() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let base = result("base", "1ms");
    let again = result("again", "1ms");
    let slow = result("slow", "6ms");
    let written = |ext: &str| {
        std::env::temp_dir().join(format!("poolbench-cmp-out-{}.{ext}", std::process::id()))
    };

    let out = bin()
        .args([
            "compare",
            "--format",
            "json",
            "--fail-if",
            "throughput<-20%,p50>+50%",
        ])
        .args([&base, &slow])
        .arg("-o")
        .arg(written("md"))
        .arg("-o")
        .arg(written("html"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = &c["cells"][0];
    assert!(cell["throughput_pct"].as_f64().unwrap() < -40.0, "{cell}");
    assert_eq!(cell["throughput_significant"], true, "{cell}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pool:4 c=4: throughput"), "{err}");
    // Written as Markdown and as HTML too, though the bound failed.
    let md = std::fs::read_to_string(written("md")).unwrap();
    assert!(
        md.contains("| pool:4 | 4 |") && md.contains("throughput significant"),
        "{md}"
    );
    let html = std::fs::read_to_string(written("html")).unwrap();
    assert_eq!(
        html.matches("<svg class=\"chart compare\"").count(),
        2,
        "{html}"
    );
    assert_eq!(
        html.matches("<rect ").count(),
        2 * 2,
        "base and new, two charts"
    );
    // The JSON printed is what `poolbench schema comparison` describes.
    let schema = bin().args(["schema", "comparison"]).output().unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&c).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let _ = std::fs::remove_file(written("md"));
    let _ = std::fs::remove_file(written("html"));

    // The same build twice: nothing crosses a bound far outside the noise.
    let out = bin()
        .args(["compare", "--fail-if", "throughput<-50%,p50>+100%"])
        .args([&base, &again])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for p in [base, again, slow] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn bad_bounds_and_unreadable_results_are_refused() {
    let out = bin()
        .args(["compare", "/nonexistent/a.json", "/nonexistent/b.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin()
        .args(["compare", "a.json", "b.json", "--fail-if", "speed<1%"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("metric"));
}

#[test]
fn a_result_naming_a_finding_this_version_does_not_know_is_read() {
    let path = result("unknown-id", "1ms");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    r["findings"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "id": "pool-too-small",
            "title": "a finding of another version",
            "cells": [],
            "evidence": [],
        }));
    std::fs::write(&path, r.to_string()).unwrap();
    for args in [vec!["report"], vec!["compare"]] {
        let mut cmd = bin();
        cmd.args(&args).arg(&path);
        if args[0] == "compare" {
            cmd.arg(&path);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let _ = std::fs::remove_file(path);
}
