//! `tune` with a network fault between it and its target, made by
//! toxiproxy as in `faults.rs`: a fault standing throughout is accounted
//! for in words or refused with its reason, and a passing one is not read
//! as the service's (its cliff, its idle close).
use crate::faults::http_target;
use crate::services::{tune_json, tune_trail};
use crate::turns::ONE_AT_A_TIME;
use serde_json::json;
use std::time::Duration;

/// `tune` with a fault standing throughout: every request pays 100 ms of
/// network. The answer says so in its words (the workers' wait, one
/// request alone) and takes as many connections as workers.
#[test]
fn tune_under_standing_latency_says_what_each_request_pays() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_serve, proxy) = http_target("tune-latency");
    proxy.add("latency", json!({"latency": 100, "jitter": 0}));
    let url = format!("http://{}/", proxy.listen);
    let (r, _) = tune_json(
        &[
            &url,
            "-c",
            "16",
            "--budget",
            "30s",
            "--threads",
            "1",
            "--no-idle-probe",
        ],
        &[0],
    );
    let rec = &r["recommendation"];
    assert_eq!(rec["pool_size"], 16, "{rec}: {}", tune_trail(&r));
    let words = r["inferences"].to_string();
    // The 100 ms of latency and the request itself: 0.1 s, or 0.11 s on
    // a busy machine.
    let wait: f64 = words
        .split("workers wait ")
        .nth(1)
        .and_then(|w| w.split(" s each").next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{words}"));
    assert!((0.1..=0.2).contains(&wait), "{wait} s: {words}");
    assert!(words.contains("one request alone"), "{words}");
}

/// Every connection reset by the network as it opens: no answer, and the
/// reason names the resets (exit 1, not a pool at 0 req/s).
#[test]
fn tune_where_every_connection_is_reset_refuses_and_says_why() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_serve, proxy) = http_target("tune-reset");
    proxy.add("reset_peer", json!({"timeout": 0}));
    let url = format!("http://{}/", proxy.listen);
    let args = [
        &url,
        "-c",
        "8",
        "--budget",
        "20s",
        "--recovery",
        "3s",
        "--no-idle-probe",
    ];
    let (r, wall) = tune_json(&args, &[1]);
    assert!(r["recommendation"].is_null(), "{}", r["recommendation"]);
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("reset"), "{reason}");
    assert!(wall < 60.0, "{wall:.0} s");
}

/// A fault that cuts every connection once, while the idle probe holds its
/// connections: one pass sees them all closed at the same gap, a later one
/// does not; the server's idle close is not made up from it.
#[test]
fn tune_does_not_read_a_passing_fault_as_the_servers_idle_close() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_serve, proxy) = http_target("tune-idle");
    let url = format!("http://{}/", proxy.listen);
    let (r, _) = std::thread::scope(|s| {
        s.spawn(|| {
            // The probe's first pass holds gaps of 0.5 s to 8 s from about
            // 0.1 s; the fault drops its data from 2 s and, removed at 4 s,
            // takes the connections open through it with it.
            std::thread::sleep(Duration::from_secs(2));
            proxy.add("timeout", json!({"timeout": 0}));
            std::thread::sleep(Duration::from_secs(2));
            proxy.remove();
        });
        tune_json(
            &[&url, "-c", "4", "--budget", "40s", "--idle-probe-max", "8s"],
            &[0],
        )
    });
    let idle = &r["server_idle"];
    assert!(idle["idle_close_s"].is_null(), "{idle}");
    let note = idle["note"].as_str().unwrap_or_default();
    assert!(note.contains("a passing fault"), "{idle}");
    assert!(
        r["recommendation"]["pool_size"].as_u64().is_some(),
        "{}",
        tune_trail(&r)
    );
}
