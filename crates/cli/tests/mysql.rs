//! `mysql://` and `mariadb://` targets against a real MariaDB (started by
//! scripts/test.sh; the outage test starts one of its own): every
//! strategy and the client's own pool (`mysql-async:N`), parameters and
//! setup, TLS, `MYSQL_PWD`, the password never printed, server errors by
//! code, bad input refused before any load, an outage recovered from;
//! and service mode over MySQL (`serve --db mysql://…`): the nested
//! checkout that starves a small pool, the pool that fixes it, the delay.
//! `tune` on MySQL is tested in tune.rs (the `alone` binary, where the
//! search has the machine to itself).

use crate::services::{
    assert_all_cells_work, mysql_url, redis_url, run_json, test_ca, OwnMysql, Serve, EVERY_STRATEGY,
};
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// A short closed-loop run of `url` with `extra` (pool:3, c=4, 500 ms
/// unless it says otherwise), as JSON.
fn run(url: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", url, "--warmup", "100ms", "--pool", "3"];
    for (flag, default) in [("-c", "4"), ("-d", "500ms")] {
        if !extra.contains(&flag) {
            args.extend([flag, default]);
        }
    }
    args.extend_from_slice(extra);
    run_json(&args)
}

/// A table name of this test process's own.
fn table(name: &str) -> String {
    format!("pb_{name}_{}", std::process::id())
}

#[test]
fn every_strategy_and_the_clients_own_pool_run_against_mariadb() {
    let url = mysql_url();
    let every = format!("{EVERY_STRATEGY},mysql-async:3");
    // A count, not a window (a busy machine can pass 700 ms unanswered).
    let r = run(&url, &["-s", &every, "-c", "6", "-n", "30", "-d", "20s"]);
    assert_all_cells_work(&r, 11);
    let strategies: Vec<&str> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["strategy"].as_str().unwrap())
        .collect();
    assert!(strategies.contains(&"mysql-async:3"), "{strategies:?}");
    // The client's pool opened at most its 3 connections and was waited on
    // (6 workers for 3 connections).
    let own = &r["cells"][10];
    assert!(
        own["connections"]["peak_open"].as_u64().unwrap() <= 3,
        "{}",
        own["connections"]
    );
    assert!(own["checkout_wait_us"]["p99"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_password_is_never_printed_or_saved() {
    let url = mysql_url();
    assert!(url.contains("poolbench-secret"));
    let saved = std::env::temp_dir().join(format!("poolbench-mysql-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run", &url, "-c", "2", "-d", "300ms", "--warmup", "0s", "-o",
        ])
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let json = std::fs::read_to_string(&saved).unwrap();
    let _ = std::fs::remove_file(&saved);
    assert!(text.contains(":***@127.0.0.1"), "{text}");
    for (what, body) in [("text", &text), ("JSON", &json)] {
        assert!(!body.contains("poolbench-secret"), "password in the {what}");
    }
    // MYSQL_PWD stands in for a URL without one, and is not printed either.
    let bare = url.replace(":poolbench-secret@", "@");
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run", &bare, "-c", "2", "-d", "300ms", "--format", "json", "--quiet",
        ])
        .env("MYSQL_PWD", "poolbench-secret")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0);
    assert!(!r.to_string().contains("poolbench-secret"));
}

#[test]
fn setup_creates_what_the_query_reads_with_its_parameters() {
    let url = mysql_url();
    let t = table("items");
    let setup = format!(
        "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id INT PRIMARY KEY, name VARCHAR(20)); \
         INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')"
    );
    let query = format!("SELECT name FROM {t} WHERE id = ?");
    let r = run(
        &url,
        &[
            "--setup",
            &setup,
            "--query",
            &query,
            "--param",
            "random(1,3)",
        ],
    );
    assert_all_cells_work(&r, 1);
    let r = run(
        &url,
        &[
            "--query",
            "SELECT ?, ?",
            "--param",
            "x{seq}",
            "--param",
            "7",
        ],
    );
    assert_all_cells_work(&r, 1);
    // Each request binds its own value: the rows written with u{seq}
    // begin at u0, which a second insert of u0 then collides with.
    let seen = table("seen");
    let setup =
        format!("DROP TABLE IF EXISTS {seen}; CREATE TABLE {seen} (v VARCHAR(20) PRIMARY KEY)");
    let insert = format!("INSERT INTO {seen} VALUES (?)");
    let r = run(
        &url,
        &["--setup", &setup, "--query", &insert, "--param", "u{seq}"],
    );
    assert_all_cells_work(&r, 1);
    let r = run(&url, &["--query", &insert, "--param", "u0", "-c", "1"]);
    let errors = &r["cells"][0]["errors"];
    assert!(
        errors["by_status"]["1062"].as_u64().unwrap() > 0,
        "{errors}"
    );
    let drop = format!("DROP TABLE {t}; DROP TABLE {seen}");
    run(&url, &["--setup", &drop, "-d", "100ms"]);
}

#[test]
fn server_errors_are_counted_by_their_code_and_the_run_goes_on() {
    let url = mysql_url();
    // Every insert after the first collides: 1062, duplicate entry, which
    // leaves the session usable.
    let t = table("dup");
    let setup = format!(
        "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id INT PRIMARY KEY); INSERT INTO {t} VALUES (1)"
    );
    let query = format!("INSERT INTO {t} VALUES (1)");
    let r = run(
        &url,
        &[
            "--setup",
            &setup,
            "--query",
            &query,
            "-s",
            "pool:2,mysql-async:2",
        ],
    );
    for c in r["cells"].as_array().unwrap() {
        let errors = &c["errors"];
        let dup = errors["by_status"]["1062"].as_u64().unwrap_or(0);
        assert!(dup > 10, "{}: {errors}", c["strategy"]);
        assert_eq!(errors["total"].as_u64().unwrap(), dup, "{errors}");
        assert_eq!(errors["by_kind"]["status"].as_u64().unwrap(), dup);
    }
    run(
        &url,
        &["--setup", &format!("DROP TABLE {t}"), "-d", "100ms"],
    );
}

#[test]
fn tls_is_verified_against_the_ca_given() {
    let url = mysql_url();
    let verified = format!("{url}?ssl-mode=VERIFY_IDENTITY");
    let r = run(&verified, &["--cacert", &test_ca()]);
    assert_all_cells_work(&r, 1);
    let maria = verified
        .replacen("mysql://", "mariadb://", 1)
        .replace("127.0.0.1", "localhost");
    let r = run(&maria, &["--cacert", &test_ca(), "-s", "mysql-async:2"]);
    assert_all_cells_work(&r, 1);
    let err = run_fails(&["run", &verified, "-c", "1", "-d", "1s"]);
    assert!(err.contains("certificate"), "{err}");
}

fn run_fails(args: &[&str]) -> String {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(20), "no hang");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "no report: {args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn bad_input_fails_before_any_load_with_one_line() {
    let url = mysql_url();
    let go = |target: &str, extra: &[&str]| {
        let mut args = vec!["run", target, "-c", "2", "-d", "1s"];
        args.extend_from_slice(extra);
        run_fails(&args)
    };
    let err = go(&url, &["--query", "SELECT ?"]);
    assert!(err.contains("takes 1 parameter(s) and 0 --param"), "{err}");
    let err = go(&url, &["--query", "SELEC 1"]);
    assert!(err.contains("(1064)"), "{err}");
    let wrong = url.replace("poolbench-secret", "not-the-password");
    let err = go(&wrong, &[]);
    assert!(
        err.contains("Access denied") && err.contains("(1045)"),
        "{err}"
    );
    assert!(!err.contains("not-the-password"), "{err}");
    let (base, _) = url.rsplit_once('/').unwrap();
    let err = go(&format!("{base}/no_such_db"), &[]);
    assert!(err.contains("no_such_db") && err.contains("(104"), "{err}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let err = go(&format!("mysql://u:p@127.0.0.1:{port}/db"), &[]);
    assert!(err.contains("refused"), "{err}");
    let err = go(&format!("{url}?ssl-mode=SOMETIMES"), &[]);
    assert!(err.contains("ssl-mode"), "{err}");
    let err = go("http://127.0.0.1:9/", &["-s", "mysql-async:2"]);
    assert!(
        err.contains("mysql-async") && err.contains("mysql://"),
        "{err}"
    );
}

#[test]
fn a_mariadb_killed_and_restarted_mid_run_is_counted_and_recovered_from() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let db = OwnMysql::mysql("outage-mysql");
    let url = db.url.clone();
    let run = std::thread::spawn(move || {
        run_json(&[
            "run",
            &url,
            "-s",
            "pool:4",
            "-c",
            "4",
            "-d",
            "5s",
            // The database stops at fixed times from the start: no thread
            // comparison before the cell (`run_threads`).
            "--threads",
            "2",
            "--warmup",
            "0s",
            "--timeout",
            "1s",
            "--connect-timeout",
            "1s",
        ])
    });
    std::thread::sleep(Duration::from_millis(1200));
    let killed = unix_now();
    db.stop();
    std::thread::sleep(Duration::from_millis(1300));
    db.restart();
    let back = unix_now();
    let r = run.join().expect("the run completes");
    let c = &r["cells"][0];
    // Where the outage fell in the measurement, for a failure's message:
    // once in CI the errors came at 4.8-5.0 s of a 5 s run, not at 1.2 s.
    let began = c["started_unix_s"].as_f64().unwrap_or(f64::NAN);
    let when = format!(
        "killed at {:.2} s and back at {:.2} s of the measurement",
        killed - began,
        back - began
    );
    let errors = &c["errors"];
    let failed = errors["total"].as_u64().unwrap();
    assert!(failed > 0 && failed < 2000, "counted, no spin: {errors}");
    let ok: Vec<u64> = c["timeline"]["ok"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let gap = ok.iter().position(|&v| v == 0).expect("an outage");
    assert!(gap >= 5, "served before the kill ({when}): {ok:?}");
    let tail: u64 = ok[ok.len() - 8..ok.len() - 1].iter().sum();
    assert!(tail > 0, "nothing after the restart ({when}): {ok:?}");
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "outage"),
        "{when}; {ok:?}; {}",
        r["findings"]
    );
}

/// Seconds since the Unix epoch, as the result's `started_unix_s`.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `--db-pool N --db-overflow M` with a nested checkout and a 1 s checkout
/// timeout, served from MySQL.
fn serve_mysql(pool: &str, overflow: &str, extra: &[&str]) -> Serve {
    let db = mysql_url();
    let mut args = vec![
        "--db",
        &db,
        "--db-pool",
        pool,
        "--db-overflow",
        overflow,
        "--nested",
        "--db-timeout",
        "1s",
    ];
    args.extend_from_slice(extra);
    Serve::start(&args)
}

#[test]
fn service_mode_on_mysql_starves_with_a_nested_checkout_and_a_big_pool_fixes_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let small = serve_mysql("5", "10", &[]);
    let load = |s: &Serve| {
        run_json(&[
            "run",
            &s.url("/authors/42"),
            "-s",
            "pool:50",
            "-c",
            "50",
            "-d",
            "2s",
            "--warmup",
            "0s",
        ])
    };
    let r = load(&small);
    let c = &r["cells"][0];
    assert!(
        c["errors"]["by_status"]["503"].as_u64().unwrap_or(0) > 0,
        "{}",
        c["errors"]
    );
    let db_pool = &c["server"]["db_pool"];
    assert!(db_pool["nested_waits"].as_u64().unwrap() > 0, "{db_pool}");
    assert!(db_pool["peak_in_use"].as_u64().unwrap() <= 15, "{db_pool}");
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "nested-checkout-starvation"),
        "{}",
        r["findings"]
    );
    drop(small);
    let big = serve_mysql("51", "0", &[]);
    let r = load(&big);
    let c = &r["cells"][0];
    assert!(
        c["ok"].as_u64().unwrap() > 100 && c["errors"]["total"] == 0,
        "{}",
        c["errors"]
    );
}

#[test]
fn service_mode_on_mysql_serves_the_seeded_rows_with_the_delay_and_the_cache() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let redis = redis_url();
    let s = serve_mysql("4", "0", &["--db-delay", "30ms", "--cache", &redis]);
    // Cold keys (one per request) go to MySQL and take its SLEEP.
    let r = run_json(&[
        "run",
        &s.url("/authors/{random:1..10000}"),
        "-s",
        "pool:4",
        "-c",
        "2",
        "-d",
        "1s",
        "--warmup",
        "0s",
    ]);
    let c = &r["cells"][0];
    assert!(
        c["ok"].as_u64().unwrap() > 5 && c["errors"]["total"] == 0,
        "{}",
        c["errors"]
    );
    let p50 = c["latency_us"]["p50"].as_f64().unwrap();
    assert!(
        p50 >= 30_000.0,
        "the delay on the database side: p50 {p50} µs"
    );
    let body = get(&s.addr, "/authors/10000");
    assert!(body.contains("\"name\":\"Author 10000\""), "{body}");
    // One warm key: answered by Redis, the database's delay gone.
    let r = run_json(&[
        "run",
        &s.url("/authors/7"),
        "-s",
        "pool:4",
        "-c",
        "2",
        "-d",
        "1s",
        "--warmup",
        "300ms",
    ]);
    let c = &r["cells"][0];
    let p50 = c["latency_us"]["p50"].as_f64().unwrap();
    assert!(p50 < 30_000.0, "from the cache: p50 {p50} µs");
    // Answered from Redis: (nearly) no database checkouts while measuring.
    let pool = &c["server"]["db_pool"];
    assert!(pool["checkouts"].as_u64().unwrap_or(0) <= 1, "{pool}");
}

/// The body of `GET path` from `addr` (HTTP/1.1, the connection closed).
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}
