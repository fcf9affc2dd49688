//! `--source`: connections bound to local addresses in turn, as a server
//! nobody here wrote (Python's) sees them; bad sources refused before load.
use crate::support::{run, Recorder};
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn connections_come_from_every_source_address() {
    let server = Recorder::start("sources");
    let url = server.url("/");
    let r = run(&[
        &url,
        "-s",
        "pool:6",
        "-c",
        "6",
        "-d",
        "300ms",
        "--source",
        "127.0.0.2-127.0.0.4",
    ]);
    assert_eq!(r["cells"][0]["errors"]["total"], 0, "{}", r["cells"][0]);
    let peers: BTreeSet<String> = server
        .seen()
        .iter()
        .map(|req| req["peer"].as_str().unwrap().to_string())
        .collect();
    let expected: BTreeSet<String> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .map(String::from)
        .into();
    assert_eq!(peers, expected);
    // The plan in the result says where the connections came from.
    assert_eq!(
        r["config"]["target_options"]["source"],
        serde_json::json!(["127.0.0.2-127.0.0.4"])
    );
}

/// The pipelining probe's connection comes from the source address too.
#[test]
fn the_pipelining_probe_binds_to_the_source_address() {
    let server = Recorder::start("sources-pipeline");
    let url = server.url("/");
    let r = run(&[
        &url,
        "-s",
        "pool:1",
        "-c",
        "1",
        "-d",
        "200ms",
        "--pipeline",
        "4",
        "--source",
        "127.0.0.5",
    ]);
    assert!(
        r["pipeline"]["responses"].as_u64().unwrap() >= 80,
        "{}",
        r["pipeline"]
    );
    let seen = server.seen();
    // 20 rounds of 4 pipelined requests, then the run's own.
    assert!(seen.len() > 80, "{} requests", seen.len());
    let peers: BTreeSet<&str> = seen.iter().map(|q| q["peer"].as_str().unwrap()).collect();
    assert_eq!(peers, BTreeSet::from(["127.0.0.5"]));
}

fn rejected(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    stderr
}

#[test]
fn bad_sources_exit_2_in_one_line_before_any_load() {
    let server = Recorder::start("bad-sources");
    let url = server.url("/");
    let run = |source: &str| rejected(&["run", &url, "-c", "1", "-d", "1s", "--source", source]);
    // Not this machine's (TEST-NET-1), unparsable, backwards, too many.
    assert!(run("192.0.2.1").contains("--source 192.0.2.1: cannot bind to it here"));
    assert!(run("localhost").contains("is not an IP address"));
    assert!(run("127.0.0.9-127.0.0.2").contains("ends before it starts"));
    assert!(run("127.0.0.0/8").contains("more than 65536"));
    // Another family than the target's.
    assert!(run("::1").contains("another address family"));
    assert!(server.seen().is_empty(), "load was sent");
    // A client library that dials for itself.
    let mysql = rejected(&["run", "mysql://u@127.0.0.1:1/db", "--source", "127.0.0.2"]);
    assert!(mysql.contains("--source applies to"), "{mysql}");
}

/// The client addresses Redis lists while a run bound to 127.0.0.2–4 holds
/// its connections (sessions driven by their holder, and the crate's
/// multiplexed connection for `round-robin`), asked until all three show
/// or the run ends.
#[test]
fn redis_connections_come_from_every_source_address() {
    let url = std::env::var("POOLBENCH_REDIS_URL")
        .expect("POOLBENCH_REDIS_URL: run the tests via scripts/test.sh");
    let port = url.trim_end_matches('/').rsplit(':').next().unwrap();
    let expected = BTreeSet::from(["127.0.0.2", "127.0.0.3", "127.0.0.4"].map(String::from));
    for strategy in ["pool:3", "round-robin:3"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["run", &url, "-s", strategy, "-c", "3", "-d", "4s"])
            .args(["--warmup", "0s", "--quiet", "--format", "json"])
            .args(["--source", "127.0.0.2-127.0.0.4"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut peers = BTreeSet::new();
        while peers != expected && child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let list = Command::new("redis-cli")
                .args(["-h", "127.0.0.1", "-p", port, "CLIENT", "LIST"])
                .output()
                .unwrap();
            peers.extend(
                String::from_utf8_lossy(&list.stdout)
                    .split_whitespace()
                    .filter_map(|f| f.strip_prefix("addr="))
                    .filter_map(|a| a.rsplit_once(':').map(|(ip, _)| ip.to_string()))
                    .filter(|ip| ip != "127.0.0.1"),
            );
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{strategy}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cell = &r["cells"][0];
        assert_eq!(cell["errors"]["total"], 0, "{strategy}: {cell}");
        assert_eq!(peers, expected, "{strategy}");
    }
}
