//! `poolbench merge`: results of the same plan add up exactly (counts,
//! histograms, timelines); results of different plans are refused. Two
//! load processes drive one `poolbench serve`, as two machines would.
mod services;
use serde_json::Value;
use services::Serve;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

fn run(server: &Serve, name: &str, c: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "poolbench-merge-{name}-{}.json",
        std::process::id()
    ));
    let out = bin()
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
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

fn load(p: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn two_results_of_one_plan_add_up_exactly() {
    let server = Serve::start(&["--delay", "1ms"]);
    let a = run(&server, "a", "4");
    let b = run(&server, "b", "4");
    let m = std::env::temp_dir().join(format!("poolbench-merged-{}.json", std::process::id()));
    let out = bin()
        .arg("merge")
        .args([&a, &b])
        .arg("-o")
        .arg(&m)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
