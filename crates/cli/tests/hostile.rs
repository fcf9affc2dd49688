//! Servers that misbehave (support/hostile_server.py, Python): garbage,
//! an endless chunked body, a 10 MB header, an absurd Content-Length; over
//! HTTP/2 no streams allowed for a while, GOAWAY after each answer, every
//! other stream refused, garbage frames. Each run ends by itself within its
//! bounds, with errors counted by kind (none where the protocol says to wait
//! or resend), and poolbench's memory stays small.
use crate::support::PortServer;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs poolbench against `mode`; its exit code, result (if JSON came)
/// and highest RSS seen in MB.
fn against(mode: &str, scheme: &str, strategy: &str, c: &str) -> (i32, Option<Value>, u64) {
    let server = PortServer::start("hostile_server.py", &[mode]);
    let url = format!("{scheme}://127.0.0.1:{}/", server.port);
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", &url, "-s", strategy, "-c", c, "-d", "2s"])
        .args(["--warmup", "0s", "--timeout", "500ms"])
        .args(["--connect-timeout", "1s"])
        .args(["--format", "json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{mode}: still running after 20 s"
        );
        if let Ok(text) = std::fs::read_to_string(&status) {
            let rss = text
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok());
            peak_kb = peak_kb.max(rss.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let json = serde_json::from_slice(&out.stdout).ok();
    (out.status.code().unwrap_or(-1), json, peak_kb / 1024)
}

fn errors(r: &Value, kind: &str) -> u64 {
    r["cells"][0]["errors"]["by_kind"][kind]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn broken_http1_answers_are_errors_by_kind_in_bounded_memory() {
    for (mode, kind) in [
        ("garbage", "protocol"),
        ("endless-chunked", "timeout"),
        ("huge-header", "protocol"),
        ("absurd-length", "protocol"),
    ] {
        let (code, r, mb) = against(mode, "http", "pool:2", "2");
        let r = r.unwrap_or_else(|| panic!("{mode}: exit {code}, no result"));
        assert_eq!(code, 0, "{mode}");
        assert!(errors(&r, kind) > 0, "{mode}: {}", r["cells"][0]["errors"]);
        assert_eq!(r["cells"][0]["ok"], 0, "{mode}");
        assert!(mb < 100, "{mode}: {mb} MB");
    }
}

#[test]
fn http2_servers_that_limit_or_refuse_streams_are_waited_for_or_resent() {
    // No stream allowed for 300 ms: requests wait, none fails.
    let (code, r, mb) = against("h2-zero-streams", "h2c", "round-robin:2", "8");
    let r = r.expect("a result");
    let c = &r["cells"][0];
    assert_eq!(code, 0);
    assert_eq!(c["errors"]["total"], 0, "{}", c["errors"]);
    assert!(c["ok"].as_u64().unwrap() > 0);
    assert!(mb < 100, "{mb} MB");
    // GOAWAY after one answer per connection, and every other stream
    // refused: the unprocessed requests go again on another connection,
    // counted as resent, not as errors.
    for mode in ["h2-goaway", "h2-refuse"] {
        let (code, r, mb) = against(mode, "h2c", "round-robin:2", "8");
        let r = r.unwrap_or_else(|| panic!("{mode}: exit {code}"));
        let c = &r["cells"][0];
        assert_eq!(code, 0, "{mode}");
        let ok = c["ok"].as_u64().unwrap();
        let failed = c["errors"]["total"].as_u64().unwrap();
        assert!(ok > 10, "{mode}: {ok} ok");
        assert!(c["resent"].as_u64().unwrap() > 0, "{mode}: {c}");
        // Refused four times in a row (every other stream, at random
        // against a fresh connection's ids) is an error: about 1 in 16.
        assert!(failed * 8 < ok, "{mode}: {failed} errors for {ok} ok");
        assert!(mb < 100, "{mode}: {mb} MB");
    }
}

#[test]
fn http2_garbage_is_refused_before_any_load() {
    let (code, r, _) = against("h2-garbage", "h2c", "shared", "2");
    assert_eq!(code, 2, "{r:?}");
}
