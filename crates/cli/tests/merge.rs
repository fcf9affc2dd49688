//! `poolbench merge`: results of the same plan add up exactly (counts,
//! histograms, timelines); results of different plans are refused. Two
//! load processes drive one `poolbench serve`, as two machines would.
use crate::services::Serve;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

fn run(server: &Serve, name: &str, c: &str) -> PathBuf {
    run_with(server, name, c, &[])
}

fn run_with(server: &Serve, name: &str, c: &str, extra: &[&str]) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "poolbench-merge-{name}-{}.json",
        std::process::id()
    ));
    succeed(
        bin()
            .args([
                "run",
                &server.url("/"),
                "-s",
                "pool:2",
                "-c",
                c,
                "-d",
                "300ms",
                "--warmup",
                "0s",
                "--quiet",
                "-o",
            ])
            .arg(&path)
            .args(extra),
    );
    path
}

/// Runs `cmd`, which must succeed (its stderr otherwise).
fn succeed(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn load(p: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn two_results_of_one_plan_add_up_exactly() {
    let server = Serve::start(&["--delay", "1ms"]);
    let a = run(&server, "a", "4");
    let b = run(&server, "b", "4");
    let m = merged_file("poolbench-merged", [&a, &b]);
    let (ra, rb, rm) = (load(&a), load(&b), load(&m));
    let (ca, cb, cm) = (&ra["cells"][0], &rb["cells"][0], &rm["cells"][0]);
    let n = |c: &Value, k: &str| c[k].as_u64().unwrap();
    for k in ["requests", "ok"] {
        assert_eq!(n(cm, k), n(ca, k) + n(cb, k), "{k}");
    }
    let count = |c: &Value| c["latency_us"]["count"].as_u64().unwrap();
    assert_eq!(
        count(cm),
        count(ca) + count(cb),
        "the histograms were added"
    );
    let max = |c: &Value| c["latency_us"]["max"].as_f64().unwrap();
    assert_eq!(max(cm), max(ca).max(max(cb)));
    let rps = |c: &Value| c["throughput_rps"].as_f64().unwrap();
    assert!((rps(cm) - rps(ca) - rps(cb)).abs() < 1e-6);
    let ok_sum = |c: &Value| -> u64 {
        c["timeline"]["ok"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        ok_sum(cm),
        ok_sum(ca) + ok_sum(cb),
        "the timelines were added"
    );

    // Another plan (-c 2): refused, saying what differs.
    let other = run(&server, "other", "2");
    let out = bin().arg("merge").args([&a, &other]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("concurrency"), "{err}");
    for p in [a, b, m, other] {
        let _ = std::fs::remove_file(p);
    }
}

/// `merge PARTS -o FILE`, which must succeed; FILE.
fn merged_file<P: AsRef<std::ffi::OsStr>>(
    name: &str,
    parts: impl IntoIterator<Item = P>,
) -> PathBuf {
    let m = std::env::temp_dir().join(format!("{name}-{}.json", std::process::id()));
    succeed(bin().arg("merge").args(parts).arg("-o").arg(&m));
    m
}

fn merge(parts: &[&PathBuf]) -> (i32, String, String) {
    let out = bin().arg("merge").args(parts).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn shards_merge_only_whole_and_of_one_plan_and_a_saturated_one_is_named() {
    let server = Serve::start(&["--delay", "1ms"]);
    let s0 = run_with(&server, "s0", "4", &["--shard", "0/2"]);
    let s1 = run_with(&server, "s1", "4", &["--shard", "1/2"]);
    let other = run_with(&server, "shard-of-another", "6", &["--shard", "1/2"]);
    let plain = run(&server, "unsharded", "4");

    let (code, _, err) = merge(&[&s0]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1 of 2 shards missing: 1"), "{err}");
    let (code, _, err) = merge(&[&s0, &other]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is shard 1/2 of another plan"), "{err}");
    let (code, _, err) = merge(&[&s0, &s0]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 0/2 is given twice"), "{err}");
    let (code, _, err) = merge(&[&s0, &plain]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a shard"), "{err}");

    // Shard 1's machine was saturated: the merged finding names it.
    let mut r = load(&s1);
    r["cells"][0]["generator_cpu"] = 0.97.into();
    r["cells"][0]["machine_cpu"] = 0.99.into();
    std::fs::write(&s1, serde_json::to_string(&r).unwrap()).unwrap();
    let m = merged_file("poolbench-shards", [&s1, &s0]);
    let merged = load(&m);
    for p in [&s0, &s1, &other, &plain, &m] {
        let _ = std::fs::remove_file(p);
    }
    let cell = &merged["cells"][0];
    assert_eq!(cell["strategy"], "pool:2");
    assert_eq!(cell["concurrency"], 4);
    let parts: Vec<u64> = cell["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["shard"].as_u64().unwrap())
        .collect();
    assert_eq!(parts, [0, 1], "in shard order, whatever the order given");
    let saturated = merged["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "generator-saturated")
        .unwrap_or_else(|| panic!("{}", merged["findings"]));
    let evidence = saturated["evidence"].to_string();
    assert!(
        evidence.contains("shard 1 (pool:1 c=2): poolbench used 97%"),
        "{evidence}"
    );
    assert!(!evidence.contains("shard 0"), "{evidence}");
}

#[test]
fn ramped_shards_merge_second_by_second() {
    let server = Serve::start(&["--delay", "2ms"]);
    let start = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
    let at = humantime::format_rfc3339_seconds(start).to_string();
    let shards: Vec<(PathBuf, std::process::Child)> = (0..2)
        .map(|i| {
            let path = std::env::temp_dir().join(format!(
                "poolbench-ramp-shard{i}-{}.json",
                std::process::id()
            ));
            let child = bin()
                .args(["run", &server.url("/"), "-s", "pool:8", "--ramp", "2..8/2s"])
                .args(["--shard", &format!("{i}/2"), "--start-at", &at, "-q", "-o"])
                .arg(&path)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (path, child)
        })
        .collect();
    let mut paths = Vec::new();
    for (path, mut child) in shards {
        assert!(child.wait().unwrap().success());
        paths.push(path);
    }
    let m = merged_file("poolbench-ramp-merged", &paths);
    let (a, b, merged) = (load(&paths[0]), load(&paths[1]), load(&m));
    for p in paths.iter().chain([&m]) {
        let _ = std::fs::remove_file(p);
    }
    let seconds = |r: &Value| r["cells"][0]["ramp"]["seconds"].as_array().unwrap().clone();
    let (sa, sb, sm) = (seconds(&a), seconds(&b), seconds(&merged));
    assert_eq!(sm.len(), 2, "{sm:?}");
    for (i, s) in sm.iter().enumerate() {
        let rps = |v: &Value| v["throughput_rps"].as_f64().unwrap();
        let sum = rps(&sa[i]) + rps(&sb[i]);
        assert!(
            (rps(s) - sum).abs() <= sum * 0.02,
            "second {i}: {} against {sum}",
            rps(s)
        );
        assert!(
            s["p99_us"].as_f64().unwrap() > 0.0,
            "second {i} has no p99: {s}"
        );
        // The whole plan's ramp: 2 to 8 workers, the middle of each second.
        let target = s["target"].as_f64().unwrap();
        assert!(
            (target - [3.5, 6.5][i]).abs() < 0.01,
            "second {i}: {target}"
        );
    }
}
