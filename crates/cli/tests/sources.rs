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
    let redis = rejected(&["run", "redis://127.0.0.1:1/", "--source", "127.0.0.2"]);
    assert!(redis.contains("--source applies to"), "{redis}");
}
