//! PostgreSQL and Redis as managed services are reached: TLS negotiated
//! as `sslmode` asks (on sessions driven by their holder and on
//! tokio-postgres clients), a Unix-domain socket, parameters bound per
//! request, `rediss://`, a password kept off the command line. The servers are the real ones scripts/test.sh
//! starts; the certificate check is the servers' own CA's.
use crate::services::{self, pg_socket_dir, pg_url, redis_url, rediss_url, run_json, test_ca};
use serde_json::Value;
use std::process::Command;

/// Every cell ran, did requests, and none failed.
fn all_ok(r: &Value) {
    for c in r["cells"].as_array().unwrap() {
        assert!(c["requests"].as_u64().unwrap() > 0, "{}", c["strategy"]);
        assert_eq!(
            c["errors"]["total"], 0,
            "{}: {}",
            c["strategy"], c["errors"]
        );
    }
}

fn run(target: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "run",
        target,
        "-s",
        "pool:2,shared",
        "-c",
        "2",
        // Twenty requests a cell, not a duration: a busy machine's TLS
        // handshake took the whole of a 400 ms cell once. The cap is a
        // hang guard.
        "-n",
        "20",
        "-d",
        "30s",
    ];
    args.extend_from_slice(&["--warmup", "0s"]);
    args.extend_from_slice(extra);
    run_json(&args)
}

/// `poolbench run ARGS`: exit 2, one line; the line.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .args(["-d", "300ms", "--warmup", "0s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

/// Fails (division by zero) on a session without TLS. (Not a CASE with
/// `1/0`: PostgreSQL folds that constant when it plans the query.)
const ONLY_OVER_TLS: &str = "SELECT 1 / ssl::int FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

#[test]
fn sslmode_require_and_verify_use_tls_on_every_kind_of_session() {
    let url = pg_url();
    let ca = test_ca();
    for mode in ["require", "verify-ca", "verify-full"] {
        let target = format!("{url}?sslmode={mode}&sslrootcert={ca}");
        all_ok(&run(&target, &["--query", ONLY_OVER_TLS]));
    }
    // The check can fail: without TLS the same query errors.
    let plain = run(
        &format!("{url}?sslmode=disable"),
        &["--query", ONLY_OVER_TLS],
    );
    let c = &plain["cells"][0];
    assert!(
        c["errors"]["total"].as_u64().unwrap() > 0,
        "{}",
        c["errors"]
    );
    assert!(!plain.to_string().contains("poolbench-secret"));
}

#[test]
fn certificates_are_checked_as_the_sslmode_says() {
    // postgres://poolbench:poolbench-secret@127.0.0.1:PORT/poolbench
    let url = pg_url();
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
    let ca = test_ca();
    // Connect to 127.0.0.1, but expect the certificate to be for another name.
    let dsn = |mode: &str, root: &str| {
        format!(
            "host=db.example hostaddr=127.0.0.1 port={port} user=poolbench \
             password=poolbench-secret dbname=poolbench sslmode={mode} {root}"
        )
    };
    let root = format!("sslrootcert={ca}");
    let err = refused(&["run", &dsn("verify-full", &root)]);
    assert!(err.contains("db.example"), "{err}");
    assert!(!err.contains("poolbench-secret"), "{err}");
    // verify-ca checks the chain only; require checks nothing.
    all_ok(&run(&dsn("verify-ca", &root), &[]));
    all_ok(&run(&dsn("require", ""), &[]));
    // An unknown CA is refused by verify-ca.
    let err = refused(&["run", &dsn("verify-ca", "")]);
    assert!(err.contains("a CA this machine does not trust"), "{err}");
}

#[test]
fn a_unix_socket_host() {
    let url = pg_url();
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
    let dir = pg_socket_dir();
    // A session over a Unix socket has no client address.
    let query = "SELECT 1 / (inet_client_addr() IS NULL)::int";
    let dsn = format!("host={dir} port={port} user=poolbench dbname=poolbench");
    all_ok(&run(&dsn, &["--query", query]));
    let as_url = format!("postgresql:///poolbench?host={dir}&port={port}&user=poolbench");
    all_ok(&run(&as_url, &["--query", query]));
}

#[test]
fn parameters_are_bound_per_request() {
    let url = pg_url();
    services::pg_execute(
        &url,
        "CREATE TABLE IF NOT EXISTS pb_params (seq bigint, r int)",
    );
    services::pg_execute(&url, "TRUNCATE pb_params");
    let r = run(
        &url,
        &[
            "--query",
            "INSERT INTO pb_params VALUES ($1, $2)",
            "--param",
            "{seq}",
            "--param",
            "random(1,3)",
        ],
    );
    all_ok(&r);
    let rows = services::pg_scalar(&url, "SELECT count(*) FROM pb_params");
    let distinct = services::pg_scalar(&url, "SELECT count(DISTINCT seq) FROM pb_params");
    let outside = services::pg_scalar(
        &url,
        "SELECT count(*) FROM pb_params WHERE r NOT BETWEEN 1 AND 3",
    );
    assert!(rows > 10, "{rows} rows");
    assert_eq!(distinct, rows, "each request its own {{seq}}");
    assert_eq!(outside, 0);
    let err = refused(&[
        "run",
        &url,
        "--query",
        "SELECT $1::int, $2::int",
        "--param",
        "1",
    ]);
    assert!(err.contains("takes 2 parameter(s) and 1 --param"), "{err}");
    let err = refused(&["run", &url, "--param", "random(5,1)"]);
    assert!(err.contains("random(A,B)"), "{err}");
}

#[test]
fn rediss_with_the_servers_ca() {
    let url = rediss_url();
    let ca = test_ca();
    all_ok(&run(
        &url,
        &["--cacert", &ca, "--command", "GET k:{random:1..9}"],
    ));
    let err = refused(&["run", &url]);
    assert!(
        err.contains("signed by a CA this machine does not trust") && err.contains("--cacert"),
        "{err}"
    );
    all_ok(&run(&url, &["--insecure"]));
}

#[test]
fn a_redis_password_from_poolbench_password() {
    let url = redis_url();
    let addr = url.trim_start_matches("redis://").trim_end_matches('/');
    let (host, port) = addr.rsplit_once(':').unwrap();
    // A user of its own, so the default user the other tests use is left be.
    let acl = Command::new("redis-cli")
        .args(["-h", host, "-p", port, "ACL", "SETUSER", "pbuser", "on"])
        .args([">pb-secret", "~*", "+@all"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&acl.stdout).trim(), "OK");
    let as_user = format!("redis://pbuser@{addr}/");
    let with = |password: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_poolbench"));
        cmd.args(["run", &as_user, "-s", "pool:2", "-c", "2", "-n", "20"])
            .args(["-d", "30s"])
            .args(["--warmup", "0s", "--format", "json", "--quiet"])
            .env_remove("POOLBENCH_PASSWORD");
        if let Some(p) = password {
            cmd.env("POOLBENCH_PASSWORD", p);
        }
        cmd.output().unwrap()
    };
    let out = with(Some("pb-secret"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    all_ok(&r);
    assert!(!r.to_string().contains("pb-secret"));
    // The variable is what logged in: a wrong one is refused. (Without
    // any, the redis crate sends no AUTH and the default user answers.)
    let out = with(Some("wrong"));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(with(None).status.success());
}
