//! A table of invalid invocations of `run` and `serve`: each must be
//! refused with exit code 2 and one line, without a panic, within 2 s,
//! before any load.
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Arguments after `poolbench`, and a word the one line must hold.
const CASES: &[(&[&str], &str)] = &[
    // Targets.
    (&["run", "http://exa mple/"], "invalid target URL"),
    (&["run", "ftp://127.0.0.1/"], "unsupported scheme"),
    (&["run", "http://"], "invalid target URL"),
    (&["run", "127.0.0.1:8080"], "no scheme"),
    (&["run", "http://127.0.0.1:65536/"], "invalid target URL"),
    (&["run", "http://127.0.0.1:0/"], "cannot reach"),
    (&["run", "http://127.0.0.1:1/", "-d", "1s"], "cannot reach"),
    (&["run", "http://no-such-host.invalid/"], "cannot resolve"),
    (
        &["run", "postgres://u@127.0.0.1:1/db?sslmode=maybe"],
        "sslmode",
    ),
    (&["run", "host=127.0.0.1 port=1 dbname='x"], "quote"),
    // Load shape.
    (&["run", "-c", "0"], "concurrency must be at least 1"),
    (&["run", "-c", "10,0"], "concurrency must be at least 1"),
    (&["run", "-c", "-3"], "-3"),
    (&["run", "-c", "ten"], "ten"),
    (&["run", "-c", "1000000000000"], "lower -c"),
    (&["run", "--pool", "0"], "pool size must be at least 1"),
    (&["run", "-s", "pool:0"], "pool"),
    (&["run", "-s", "nope"], "nope"),
    (&["run", "-s", "elastic:4+x"], "elastic"),
    (&["run", "-s", "partitioned:0x4"], "partitioned"),
    (&["run", "-d", "10x"], "10x"),
    (&["run", "-d", "0s"], "duration"),
    (&["run", "-d", "-1s"], "-1"),
    (&["run", "--warmup", "soon"], "soon"),
    (&["run", "--timeout", "0s"], "above zero"),
    (&["run", "--connect-timeout", "0s"], "above zero"),
    (&["run", "--checkout-timeout", "abc"], "abc"),
    (&["run", "-n", "0"], "requests"),
    (&["run", "--rate", "0"], "rate"),
    (&["run", "--rate", "-5"], "-5"),
    // Shards and schedules.
    (&["run", "http://127.0.0.1:1/", "--shard", "4/4"], "below 4"),
    (
        &["run", "http://127.0.0.1:1/", "--shard", "1"],
        "expected I/N",
    ),
    (&["run", "--shard", "0/2"], "needs a target URL"),
    (
        &["run", "http://127.0.0.1:1/", "-c", "2", "--shard", "0/3"],
        "leaves shard 2 nothing to run",
    ),
    (&["run", "--start-at", "tomorrow"], "RFC 3339"),
    (&["run", "--start-at", "2001-01-01T00:00:00Z"], "has passed"),
    (&["run", "--slot", "5s"], "--start-at"),
    (
        &[
            "run",
            "--start-at",
            "2099-01-01T00:00:00Z",
            "-d",
            "2s",
            "--slot",
            "1s",
        ],
        "shorter than the warm-up",
    ),
    (&["run", "--rate", "NaN"], "rate"),
    (&["run", "--rate", "inf"], "rate"),
    (&["run", "--rate", "100", "--batch", "10"], "batch"),
    (&["run", "--reps", "0"], "reps"),
    (&["run", "--threads", "0"], "threads"),
    (&["run", "--pipeline", "1"], "pipeline"),
    (&["run", "--stop-on-slo"], "--stop-on-slo needs --slo"),
    (
        &["run", "--stop-on-slo", "--slo", "p99<50ms", "-c", "8,8"],
        "give -c two or more",
    ),
    (
        &["run", "--stop-on-slo", "--slo", "p99<50ms", "--rate", "100"],
        "give -c two or more",
    ),
    (
        &[
            "run",
            "http://127.0.0.1:1/",
            "--stop-on-slo",
            "--slo",
            "p99<50ms",
            "-c",
            "2,4",
            "--shard",
            "0/2",
        ],
        "each shard would stop",
    ),
    (
        &["run", "--arrival", "sometimes", "--rate", "10"],
        "sometimes",
    ),
    (
        &["run", "--max-inflight", "0", "--rate", "10"],
        "max-inflight",
    ),
    // Requests.
    (&["run", "-H", "no colon"], "header"),
    (&["run", "-H", "Content-Length: 3"], "Content-Length"),
    (&["run", "-m", "GE T"], "method"),
    (&["run", "--body-file", "/nonexistent/body"], "body"),
    (&["run", "--body", "a", "--body-file", "/tmp/x"], "--body"),
    (&["run", "--body", "{random:9..1}"], "random"),
    (&["run", "--call", "a.B/C"], "apply to grpc"),
    (&["run", "--param", "1"], "postgres"),
    (
        &["run", "redis://127.0.0.1:1/", "--command", "GET 'a"],
        "quotes",
    ),
    // Files.
    (
        &[
            "run",
            "https://127.0.0.1:1/",
            "--cacert",
            "/nonexistent.pem",
        ],
        "cacert",
    ),
    (&["run", "-o", "/nonexistent-dir/x.json"], "cannot write -o"),
    // The built-in server.
    (&["run", "--server-delay", "uniform(5ms)"], "uniform"),
    (&["run", "--server-fail-rate", "1.5"], "fail"),
    (&["serve", "--listen", "127.0.0.1:65536"], "65536"),
    (&["serve", "--listen", "nowhere"], "nowhere"),
    (&["serve", "--delay", "normal(5ms)"], "normal"),
    (&["serve", "--delay", "exp(-1ms)"], "exp"),
    (&["serve", "--delay", "lognormal(1ms,x)"], "lognormal"),
    (&["serve", "--fail-rate", "-0.1"], "-0"),
    (&["serve", "--fail-rate", "1.5"], "fail"),
    (&["serve", "--max-inflight", "0"], "max-inflight"),
    (&["serve", "--threads", "0"], "threads"),
    (&["serve", "--max-concurrent-streams", "0"], "streams"),
    (
        &[
            "serve",
            "--cert",
            "/nonexistent.pem",
            "--tls-listen",
            "127.0.0.1:0",
        ],
        "--key",
    ),
    (
        &[
            "serve",
            "--cert",
            "/etc/hostname",
            "--key",
            "/etc/hostname",
            "--tls-listen",
            "127.0.0.1:0",
        ],
        "cert",
    ),
    (
        &[
            "serve",
            "--db",
            "postgres://u@127.0.0.1:1/db",
            "--db-pool",
            "0",
        ],
        "db-pool",
    ),
    (&["serve", "--stall", "6s", "--stall-every", "5s"], "stall"),
    (&["run", "--checkout-timeout", "0s"], "above zero"),
    (&["frobnicate"], "frobnicate"),
];

/// What is wrong with how `args` was refused, if anything.
fn check(args: &[OsString], mentions: &str) -> Option<String> {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A case that hangs is stopped (by its PID) and reported, not waited on.
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("{args:?}: still running after 5 s"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    let wrong = if out.status.code() != Some(2) {
        format!("exit {:?}", out.status.code())
    } else if err.trim_end().lines().count() != 1 {
        "not one line".to_string()
    } else if err.contains("panicked") {
        "a panic".to_string()
    } else if !err.to_lowercase().contains(&mentions.to_lowercase()) {
        format!("no mention of {mentions:?}")
    } else if took >= Duration::from_secs(2) {
        format!("took {took:?}")
    } else if !out.stdout.is_empty() {
        "printed to stdout".to_string()
    } else {
        return None;
    };
    Some(format!("{args:?}: {wrong}: {}", err.trim_end()))
}

fn refused(args: Vec<OsString>, mentions: &str) {
    if let Some(wrong) = check(&args, mentions) {
        panic!("{wrong}");
    }
}

#[test]
fn every_invalid_invocation_is_one_line_and_exit_2() {
    assert!(CASES.len() >= 50, "{} cases", CASES.len());
    let wrong: Vec<String> = CASES
        .iter()
        .filter_map(|(args, mentions)| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            check(&args, mentions)
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        CASES.len(),
        wrong.join("\n")
    );
}

#[test]
fn arguments_that_are_not_utf8() {
    let bad = OsString::from_vec(vec![b'h', 0xff, 0xfe]);
    refused(vec!["run".into(), bad.clone()], "UTF-8");
    refused(vec!["run".into(), "-s".into(), bad.clone()], "UTF-8");
    refused(vec!["serve".into(), "--listen".into(), bad], "UTF-8");
}
