//! Client certificates (`--cert`, `--key`; `sslcert`/`sslkey` in PostgreSQL
//! URLs) against the real databases scripts/services.sh starts: PostgreSQL
//! and MariaDB each have a login (`poolbench_cert`) that also needs a
//! certificate the test CA signed, and Redis checks any certificate a
//! client presents. With it the load runs; without it, or with a
//! certificate the CA did not sign, the run stops before any load (exit 2,
//! one line).
use serde_json::Value;
use std::process::{Command, Output};

fn env(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run the tests via scripts/test.sh, which starts the services")
    })
}

fn run(url: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run", url, "-s", "pool:2", "-c", "2", "-n", "20", "--warmup", "0s",
        ])
        // Twenty requests, not a duration: a busy machine's TLS handshake
        // took the whole of a 300 ms run once. The cap is a hang guard.
        .args(["-d", "30s"])
        .args(["--quiet", "--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

/// The run succeeded, and every request of its one cell did: that cell.
fn served(out: Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = r["cells"][0].clone();
    assert!(cell["requests"].as_u64().unwrap() > 0, "{cell}");
    assert_eq!(cell["errors"]["total"], 0, "{cell}");
    cell
}

/// Refused before any load, in one line naming the cause.
fn refused(out: Output, cause: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(cause), "{err}");
    assert!(out.stdout.is_empty(), "no result without load");
}

fn files() -> (String, String, String, String) {
    let cert = env("POOLBENCH_TEST_CLIENT_CERT");
    let key = env("POOLBENCH_TEST_CLIENT_KEY");
    let dir = std::path::Path::new(&cert).parent().unwrap().to_owned();
    let foreign = dir.join("self.pem").display().to_string();
    (cert, key, env("POOLBENCH_TEST_CA"), foreign)
}

#[test]
fn postgres_takes_sslcert_and_sslkey_from_the_url() {
    let (cert, key, ca, _) = files();
    let base = format!(
        "{}?sslmode=verify-full&sslrootcert={ca}",
        env("POOLBENCH_PG_CERT_URL")
    );
    served(run(&format!("{base}&sslcert={cert}&sslkey={key}"), &[]));
    // --cert and --key do the same.
    served(run(&base, &["--cert", &cert, "--key", &key]));
    refused(run(&base, &[]), "client certificate");
}

#[test]
fn mysql_presents_the_certificate_given() {
    let (cert, key, ca, _) = files();
    let url = format!(
        "{}?ssl-mode=VERIFY_IDENTITY",
        env("POOLBENCH_MYSQL_CERT_URL")
    );
    served(run(
        &url,
        &["--cacert", &ca, "--cert", &cert, "--key", &key],
    ));
    refused(run(&url, &["--cacert", &ca]), "(1045)");
    let plain = env("POOLBENCH_MYSQL_CERT_URL");
    refused(run(&plain, &["--cert", &cert, "--key", &key]), "need TLS");
}

#[test]
fn rediss_presents_the_certificate_given_and_the_server_checks_it() {
    let (cert, key, ca, foreign) = files();
    let url = env("POOLBENCH_REDISS_URL");
    served(run(
        &url,
        &["--cacert", &ca, "--cert", &cert, "--key", &key],
    ));
    let foreign_key = foreign.replace("self.pem", "self-key.pem");
    refused(
        run(
            &url,
            &["--cacert", &ca, "--cert", &foreign, "--key", &foreign_key],
        ),
        "UnknownCA",
    );
    // The key of another certificate: found before anything connects.
    refused(
        run(
            &url,
            &["--cacert", &ca, "--cert", &cert, "--key", &foreign_key],
        ),
        "is not the key of --cert",
    );
    refused(
        run(
            &env("POOLBENCH_REDIS_URL"),
            &["--cert", &cert, "--key", &key],
        ),
        "need TLS",
    );
}

/// The handshakes of a per-request run against `url`, resumption as told.
fn handshakes(url: &str, resume: &str, extra: &[&str]) -> (u64, u64) {
    let cell = served(
        Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["run", url, "-s", "per-request", "-c", "2", "-n", "40"])
            .args(["-d", "30s"])
            .args(["--warmup", "0s", "--quiet", "--format", "json"])
            .args(["--tls-resume", resume])
            .args(extra)
            .output()
            .unwrap(),
    );
    let tls = &cell["tls"];
    assert_eq!(tls["resumption"], resume == "on", "{cell}");
    (
        tls["full"].as_u64().unwrap(),
        tls["resumed"].as_u64().unwrap(),
    )
}

#[test]
fn rediss_resumes_sessions_unless_told_not_to() {
    let (_, _, ca, _) = files();
    let url = env("POOLBENCH_REDISS_URL");
    let (full, resumed) = handshakes(&url, "on", &["--cacert", &ca]);
    // A connection per request: all but the first few resume.
    assert!(
        resumed > 10 && resumed > 4 * full,
        "{full} full, {resumed} resumed"
    );
    let (full, resumed) = handshakes(&url, "off", &["--cacert", &ca]);
    assert!(full > 10 && resumed == 0, "{full} full, {resumed} resumed");
}

#[test]
fn mysql_runs_with_resumption_off_too() {
    let (_, _, ca, _) = files();
    let url = format!("{}?ssl-mode=VERIFY_IDENTITY", env("POOLBENCH_MYSQL_URL"));
    for resume in ["on", "off"] {
        served(run(&url, &["--cacert", &ca, "--tls-resume", resume]));
    }
}
