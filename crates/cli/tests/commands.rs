//! The binary end to end: `run` on the built-in server, `serve`.
use crate::turns::ONE_AT_A_TIME;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

#[test]
fn run_embedded_prints_json_and_writes_the_file() {
    let dir = std::env::temp_dir().join(format!("poolbench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("result.json");
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run",
            "-s",
            "pool,shared",
            "--pool",
            "2,4",
            "-c",
            "1,4",
            "-d",
            "300ms",
        ])
        .args(["--warmup", "0s", "--format", "json", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(printed, written);
    let cells = printed["cells"].as_array().unwrap();
    // pool:2, pool:4, shared at two concurrency levels.
    assert_eq!(cells.len(), 6);
    assert!(cells
        .iter()
        .all(|c| c["throughput_rps"].as_f64().unwrap() > 0.0));
    assert!(
        printed["server"]["delay"].is_string(),
        "built-in server settings recorded"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_text_has_a_table_per_concurrency_and_the_grid() {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run",
            "-s",
            "pool,per-request",
            "--pool",
            "2,4",
            "-c",
            "1,4",
            "-d",
            "300ms",
        ])
        .args(["--warmup", "0s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("concurrency 1\n") && text.contains("concurrency 4\n"),
        "{text}"
    );
    assert!(text.contains("x slower"), "{text}");
    assert!(
        text.contains("pool: req/s (error %) by pool size × concurrency"),
        "{text}"
    );
    // No progress bar when stderr is not a terminal.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn serve_prints_its_address_first_and_answers() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["serve", "--listen", "127.0.0.1:0", "--body-size", "5"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim_end()
        .strip_prefix("http ")
        .expect("`http ADDR` on the first line")
        .to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET /anything HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("content-length: 5"), "{reply}");
}

#[test]
fn open_loop_json_has_both_latencies_findings_and_a_recommendation() {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run", "-s", "pool:4", "--rate", "100", "-d", "1s", "--warmup", "0s",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = &r["cells"][0];
    assert_eq!(cell["model"], "open");
    assert_eq!(cell["requested_rate"], 100.0);
    assert!(cell["latency_us"]["p99"].as_f64().unwrap() > 0.0);
    assert!(cell["latency_uncorrected_us"]["p99"].as_f64().unwrap() > 0.0);
    let lag = &cell["send_lag_us"];
    assert_eq!(lag["count"], cell["requests"], "one send lag per request");
    assert!(lag["p99"].as_f64().unwrap() > 0.0);
    assert!(cell["generator_hiccups_us"]["count"].as_u64().unwrap() > 500);
    assert!(!cell["histograms"]["send_lag_ns"]
        .as_str()
        .unwrap()
        .is_empty());
    assert!(cell["timeline"]["ok"].as_array().unwrap().len() >= 9);
    let ids: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"few-samples"), "{ids:?}");
    assert_eq!(r["recommendation"]["strategy"], "pool:4");
}

#[test]
fn help_explains_the_load_models() {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--rate",
        "--batch",
        "--reps",
        "--pipeline",
        "--fail-on-nested",
        "least-loaded:N",
        "--stop-on-slo",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

/// `poolbench run URL ...` as JSON; panics with stderr when it fails.
fn run_json(url: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", url, "-s", "shared,pool:2", "-c", "2", "-d", "300ms"])
        .args(["--warmup", "0s", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A child process stopped (and waited for) when dropped, even by a panic.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_names_each_listener_and_every_protocol_answers() {
    let mut child = Stopped(
        Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args([
                "--tls-listen",
                "127.0.0.1:0",
                "--grpc-listen",
                "127.0.0.1:0",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut addr = |name: &str| {
        let line = lines.next().unwrap().unwrap();
        line.strip_prefix(&format!("{name} "))
            .unwrap_or_else(|| panic!("`{name} ADDR` expected, got {line:?}"))
            .to_string()
    };
    let (http, tls, grpc) = (addr("http"), addr("tls"), addr("grpc"));
    let targets = [
        (format!("h2c://{http}/"), vec![]),
        (format!("https://{tls}/"), vec!["--insecure", "--http1"]),
        (format!("https://{tls}/"), vec!["--insecure", "--http2"]),
        (format!("grpc://{grpc}/"), vec![]),
        (format!("grpcs://{tls}/"), vec!["--insecure"]),
    ];
    let results: Vec<_> = targets
        .iter()
        .map(|(url, extra)| run_json(url, extra))
        .collect();
    drop(child);
    for ((url, _), r) in targets.iter().zip(&results) {
        for cell in r["cells"].as_array().unwrap() {
            assert!(cell["ok"].as_u64().unwrap() > 0, "{url}: {cell}");
            assert_eq!(cell["errors"]["total"], 0, "{url}: {}", cell["errors"]);
        }
    }
}

#[test]
fn equal_strategies_are_shown_as_a_tie_not_as_slower() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Two pools larger than c behind a 100 ms server: the same throughput
    // (c ÷ 100 ms) within timer noise, which a busy machine's few
    // milliseconds do not move by 5% (at 20 ms they did once).
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", "-s", "pool:8,pool:16", "-c", "8", "-d", "2s"])
        .args(["--warmup", "300ms", "--server-delay", "100ms", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tie (within 5%)"), "{text}");
    assert!(!text.contains("x slower"), "{text}");
}

fn explain(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("explain")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn explain_prints_each_finding_and_docs_findings_md_is_its_page() {
    let out = explain(&["pool-bound"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("pool-bound: "), "{text}");
    for head in ["What it means", "Why it matters", "What to do"] {
        assert!(text.contains(head), "{text}");
    }
    // Every id the list names explains itself: the findings', then tune's
    // inferences'.
    let list = String::from_utf8(explain(&[]).stdout).unwrap();
    let (findings, inferences) = list.split_once("\n\nThe inferences").expect(&list);
    let ids = |part: &str| -> Vec<String> {
        part.lines()
            .filter(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let (findings, inferences) = (ids(findings), ids(inferences));
    assert_eq!(findings.len(), poolbench_model::findings::Id::ALL.len());
    assert_eq!(inferences.len(), poolbench_model::InferenceId::ALL.len());
    for id in findings.iter().chain(&inferences) {
        assert_eq!(explain(&[id]).status.code(), Some(0), "{id}");
    }
    let cliff = String::from_utf8(explain(&["cliff"]).stdout).unwrap();
    assert!(
        cliff.starts_with("cliff: an inference of `tune`"),
        "{cliff}"
    );
    // An unknown id: one line, exit 2.
    let out = explain(&["no-such-finding"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no finding or inference named \"no-such-finding\""),
        "{err}"
    );
    // The page in docs/ is the generated one.
    let page = String::from_utf8(explain(&["--format", "markdown"]).stdout).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/findings.md");
    let saved = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        saved == page,
        "docs/findings.md is not `poolbench explain --format markdown`: regenerate it"
    );
}

/// `run` without `--threads`, 5 s on the built-in server: one load thread
/// and one per core are compared on the cell first, said on stderr and
/// kept in the result, whose plan runs with the count kept. A shorter
/// run does not compare.
#[test]
fn a_run_of_five_seconds_compares_its_load_threads_first() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = |d: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["run", "-s", "pool:8", "-c", "8", "-d", d])
            .args(["--warmup", "0s", "--format", "json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        (json, stderr)
    };
    let (json, stderr) = run("5s");
    let g = &json["generator_threads"];
    if cores < 2 {
        assert!(g.is_null(), "one core: nothing to compare: {g}");
        return;
    }
    let kept = g["threads"].as_u64().unwrap_or_else(|| panic!("{json:#}"));
    assert!(kept == 1 || kept == cores as u64, "{g}");
    assert_eq!(json["config"]["threads"].as_u64(), Some(kept), "{g}");
    assert_eq!(g["many"].as_u64(), Some(cores as u64), "{g}");
    assert_eq!(g["in_flight"].as_u64(), Some(8), "{g}");
    assert!(g["one_rps"].as_f64().unwrap() > 0.0, "{g}");
    assert!(g["many_rps"].as_f64().unwrap() > 0.0, "{g}");
    let said = stderr
        .lines()
        .find(|l| l.starts_with("threads: "))
        .unwrap_or_else(|| panic!("no threads line on stderr:\n{stderr}"));
    assert!(said.contains("pool:8"), "{said}");
    let (short, stderr) = run("1s");
    assert!(short["generator_threads"].is_null(), "{short:#}");
    assert!(!stderr.contains("threads: "), "{stderr}");
}
