//! `postgres://` and `redis://` targets against real servers (started by
//! scripts/test.sh): every strategy, the library baselines, connection
//! counts as the server sees them, and bad input.

use crate::services::{
    self, assert_all_cells_work, pg_scalar, pg_url, redis_url, run_json, EVERY_STRATEGY,
};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn every_strategy_runs_against_postgres() {
    let url = pg_url();
    let r = run_json(&[
        "run",
        &url,
        "-s",
        EVERY_STRATEGY,
        "-c",
        "6",
        // A count, not a window: a busy machine once let one strategy's
        // 700 ms window pass before its first answer.
        "-n",
        "30",
        "-d",
        "20s",
        "--warmup",
        "100ms",
    ]);
    assert_all_cells_work(&r, 10); // The URL's password is nowhere in the result.
    assert!(url.contains("poolbench-secret"));
    assert!(
        !r.to_string().contains("poolbench-secret"),
        "password in the JSON"
    );
    assert!(r["config"]["target"]["url"]
        .as_str()
        .unwrap()
        .contains(":***@"));
}

#[test]
fn every_strategy_runs_against_redis() {
    let url = redis_url();
    let r = run_json(&[
        "run",
        &url,
        "-s",
        EVERY_STRATEGY,
        "-c",
        "6",
        // A count, not a window: a busy machine once let one strategy's
        // 700 ms window pass before its first answer.
        "-n",
        "30",
        "-d",
        "20s",
        "--warmup",
        "100ms",
        "--command",
        "GET missing-key",
    ]);
    assert_all_cells_work(&r, 10);
}

/// Sessions PostgreSQL has counted for the database, once the count settles
/// (backends report theirs as they exit).
fn sessions(url: &str) -> i64 {
    let sql = "SELECT sessions FROM pg_stat_database WHERE datname = current_database()";
    let mut last = pg_scalar(url, sql);
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(150));
        // Each read is itself a session: a settled count grows by one.
        let now = pg_scalar(url, sql);
        if now == last + 1 {
            return now;
        }
        last = now;
    }
    last
}

#[test]
fn per_request_opens_one_postgres_connection_per_request_and_pool_at_most_n() {
    // A database of its own, so the other tests' sessions are not counted.
    let base = pg_url();
    let url = format!("{}/poolbench_sessions", base.rsplit_once('/').unwrap().0);
    services::pg_execute(&base, "CREATE DATABASE poolbench_sessions");
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "per-request,pool:3",
        "-c",
        "4",
        "-d",
        "800ms",
        "--warmup",
        "0s",
    ]);
    let cells = r["cells"].as_array().unwrap();
    let per_request = &cells[0];
    let pool = &cells[1];
    assert_eq!(per_request["strategy"], "per-request");
    let requests = per_request["requests"].as_u64().unwrap()
        + per_request["after_end"].as_u64().unwrap()
        + per_request["unfinished"].as_u64().unwrap();
    assert!(requests > 0);
    // The client opened one connection per request.
    let opened = per_request["connections"]["opened"].as_u64().unwrap();
    assert!(
        opened >= requests,
        "{opened} connections for {requests} requests"
    );
    assert!(pool["connections"]["peak_open"].as_u64().unwrap() <= 3);

    // And PostgreSQL agrees: per-request alone, then pool:3 alone.
    let before = sessions(&url);
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "per-request",
        "-c",
        "4",
        "-d",
        "500ms",
        "--warmup",
        "0s",
    ]);
    let after = sessions(&url);
    let c = &r["cells"][0];
    let opened = c["connections"]["opened"].as_u64().unwrap() as i64;
    let measured = c["requests"].as_u64().unwrap() as i64;
    // The run's own sessions: its connections, the reachability check, and
    // the one that read the count.
    let seen = after - before - 1;
    // Some requests (9 in 800 ms beside a busy core; hundreds alone).
    assert!(measured > 0, "{measured}");
    assert!(
        seen >= measured && seen <= opened + 2,
        "PostgreSQL saw {seen} sessions; poolbench opened {opened} for {measured} measured requests"
    );

    let before = sessions(&url);
    let r = run_json(&[
        "run", &url, "-s", "pool:3", "-c", "8", "-n", "200", "-d", "30s", "--warmup", "0s",
    ]);
    let after = sessions(&url);
    // 200 requests, not 500 ms: a busy machine answered under 100 in that.
    assert!(r["cells"][0]["ok"].as_u64().unwrap() >= 200);
    let seen = after - before - 1;
    assert!(
        (1..=3 + 2).contains(&seen),
        "pool:3 made PostgreSQL see {seen} sessions"
    );
}

#[test]
fn redis_sees_one_connection_per_request_under_per_request() {
    let url = redis_url();
    let before = services::redis_connections_received(&url);
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "per-request",
        "-c",
        "2",
        "-d",
        "400ms",
        "--warmup",
        "0s",
    ]);
    let after = services::redis_connections_received(&url);
    let c = &r["cells"][0];
    let opened = c["connections"]["opened"].as_u64().unwrap();
    let measured = c["requests"].as_u64().unwrap();
    // Other tests of this binary may connect meanwhile: Redis saw at least
    // one connection per measured request.
    let seen = after - before - 1;
    // Some requests (9 in 800 ms beside a busy core; hundreds alone).
    assert!(measured > 0, "{measured}");
    assert!(
        seen >= measured && opened >= measured,
        "Redis saw {seen} connections, poolbench opened {opened}, for {measured} requests"
    );
}

fn run_fails(args: &[&str]) -> String {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(20), "no hang");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn bad_database_input_fails_before_the_run_with_the_cause() {
    let url = pg_url();
    let wrong = url.replace("poolbench-secret", "not-the-password");
    let err = run_fails(&["run", &wrong, "-c", "2", "-d", "1s"]);
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(
        !err.contains("not-the-password"),
        "the password is not printed: {err}"
    );
    let (base, _) = url.rsplit_once('/').unwrap();
    let err = run_fails(&["run", &format!("{base}/no_such_db"), "-c", "2", "-d", "1s"]);
    assert!(err.contains("does not exist"), "{err}");
    let err = run_fails(&["run", &url, "--query", "SELEC 1", "-c", "2", "-d", "1s"]);
    assert!(err.contains("syntax error"), "{err}");
    let err = run_fails(&[
        "run",
        &url,
        "--query",
        "SELECT $1::int",
        "-c",
        "2",
        "-d",
        "1s",
    ]);
    assert!(err.contains("takes 1 parameter"), "{err}");
    let err = run_fails(&[
        "run",
        &url,
        "--setup",
        "CREATE TABL t",
        "-c",
        "2",
        "-d",
        "1s",
    ]);
    assert!(
        err.contains("setup") && err.contains("syntax error"),
        "{err}"
    );
    let err = run_fails(&["serve", "--listen", "127.0.0.1:0", "--db", &wrong]);
    assert!(err.contains("password authentication failed"), "{err}");
}

#[test]
fn a_query_with_setup_and_redis_errors_are_counted_by_kind() {
    let url = pg_url();
    let r = run_json(&[
        "run",
        &url,
        "--setup",
        "CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text); \
         INSERT INTO kv VALUES (1, 'one') ON CONFLICT DO NOTHING",
        "--query",
        "SELECT v FROM kv WHERE k = 1",
        "-s",
        "pool:2",
        "-c",
        "2",
        "-d",
        "300ms",
        "--warmup",
        "0s",
    ]);
    assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0);
    assert_eq!(r["cells"][0]["errors"]["total"], 0);

    // A query that fails on the server at run time: counted, not fatal.
    let r = run_json(&[
        "run",
        &url,
        "--query",
        "SELECT 1 / (random() * 0)::int",
        "-s",
        "shared",
        "-c",
        "2",
        // By count: a 300 ms cell once ended before the login did (a busy
        // machine), and answered nothing; -d only guards against a hang.
        "-n",
        "8",
        "-d",
        "20s",
        "--warmup",
        "0s",
    ]);
    let c = &r["cells"][0];
    assert_eq!(c["ok"], 0);
    assert!(
        c["errors"]["by_kind"]["status"].as_u64().unwrap() > 0,
        "{}",
        c["errors"]
    );

    let r = run_json(&[
        "run",
        &redis_url(),
        "--command",
        "NOSUCHCOMMAND x",
        "-s",
        "pool:2",
        "-c",
        "2",
        "-n",
        "8",
        "-d",
        "20s",
        "--warmup",
        "0s",
    ]);
    let c = &r["cells"][0];
    assert_eq!(c["ok"], 0);
    assert!(
        c["errors"]["by_kind"]["status"].as_u64().unwrap() > 0,
        "{}",
        c["errors"]
    );
    // Server errors leave the connections usable: no reconnects.
    assert!(c["connections"]["opened"].as_u64().unwrap() <= 2);
}

/// `poolbench run ARGS` with the PG* variables cleared, then `env` set.
fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_poolbench"));
    for var in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGPASSWORD",
        "PGDATABASE",
        "PGPASSFILE",
        "POOLBENCH_PASSWORD",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(args).args(["--format", "json", "--quiet"]);
    cmd.envs(env.iter().copied())
        .output()
        .expect("poolbench runs")
}

#[test]
fn keyword_dsns_pg_variables_and_the_password_file() {
    // postgres://poolbench:poolbench-secret@127.0.0.1:PORT/poolbench
    let url = pg_url();
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
    let dsn = format!("host=127.0.0.1 port={port} dbname=poolbench user=poolbench");
    // A count, not a window: a PostgreSQL login on a busy machine took
    // more than 300 ms, and a 300 ms cell then answered nothing.
    let quick = [
        "-s", "pool:2", "-c", "2", "-n", "4", "-d", "20s", "--warmup", "0s",
    ];
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0);
        assert!(!r.to_string().contains("poolbench-secret"));
        r
    };
    let mut args = vec!["run", dsn.as_str()];
    args.extend(quick);
    // The password from PGPASSWORD, or POOLBENCH_PASSWORD.
    ok(run_with_env(&args, &[("PGPASSWORD", "poolbench-secret")]));
    ok(run_with_env(
        &args,
        &[("POOLBENCH_PASSWORD", "poolbench-secret")],
    ));
    // From a password file, its line matching by wildcards.
    let dir = std::env::temp_dir().join(format!("poolbench-pgpass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgpass = dir.join("pgpass");
    std::fs::write(
        &pgpass,
        format!("# comment\nother:1:*:*:wrong\n127.0.0.1:{port}:*:poolbench:poolbench-secret\n"),
    )
    .unwrap();
    ok(run_with_env(
        &args,
        &[("PGPASSFILE", pgpass.to_str().unwrap())],
    ));
    // Everything from the variables: an empty-host DSN needs only a keyword.
    let bare = ["run", "dbname=poolbench"];
    let mut bare_args = bare.to_vec();
    bare_args.extend(quick);
    let r = ok(run_with_env(
        &bare_args,
        &[
            ("PGHOST", "127.0.0.1"),
            ("PGPORT", port),
            ("PGUSER", "poolbench"),
            ("PGPASSWORD", "poolbench-secret"),
        ],
    ));
    assert_eq!(r["config"]["target"]["url"], "dbname=poolbench");
    // A password in the DSN is redacted; without any, the server refuses.
    let with_password = format!("{dsn} password=poolbench-secret");
    let mut pw_args = vec!["run", with_password.as_str()];
    pw_args.extend(quick);
    let r = ok(run_with_env(&pw_args, &[]));
    assert!(r["config"]["target"]["url"]
        .as_str()
        .unwrap()
        .ends_with("password=***"));
    let empty_home = dir.join("home");
    std::fs::create_dir_all(&empty_home).unwrap();
    let out = run_with_env(&args, &[("HOME", empty_home.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `redis-cli --raw ARGS` against the test's Redis.
fn redis_cli(url: &str, args: &[&str]) -> String {
    let addr = url.trim_start_matches("redis://").trim_end_matches('/');
    let (host, port) = addr.rsplit_once(':').unwrap();
    let out = Command::new("redis-cli")
        .args(["--raw", "-h", host, "-p", port])
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn redis_commands_take_quotes_and_vary_their_keys() {
    let url = redis_url();
    let prefix = format!("pb{}", std::process::id());
    let incr = format!("INCR {prefix}:{{random:1..4}}");
    let r = run_json(&[
        "run",
        &url,
        "--command",
        &incr,
        "-s",
        "pool:2",
        "-c",
        "2",
        // A count, not a 400 ms window (the machine's speed); 20 s a
        // hang guard.
        "-n",
        "100",
        "-d",
        "20s",
    ]);
    let ok = r["cells"][0]["ok"].as_u64().unwrap();
    assert!(ok > 20, "{ok}");
    let keys: Vec<String> = (1..=4).map(|i| format!("{prefix}:{i}")).collect();
    let mut mget = vec!["MGET"];
    mget.extend(keys.iter().map(String::as_str));
    let counts: Vec<u64> = redis_cli(&url, &mget)
        .lines()
        .map(|l| l.trim().parse().unwrap_or(0))
        .collect();
    assert_eq!(counts.iter().filter(|&&n| n > 0).count(), 4, "{counts:?}");
    // Every measured INCR counted once (warm-up and drain ones too).
    assert!(counts.iter().sum::<u64>() >= ok, "{counts:?} < {ok}");
    let set = format!("SET '{prefix} spaced' \"a b\"");
    run_json(&[
        "run",
        &url,
        "--command",
        &set,
        "-s",
        "shared",
        "-c",
        "1",
        "-d",
        "100ms",
    ]);
    assert_eq!(
        redis_cli(&url, &["GET", &format!("{prefix} spaced")]).trim(),
        "a b"
    );
    let mut del = vec!["DEL"];
    del.extend(keys.iter().map(String::as_str));
    let spaced = format!("{prefix} spaced");
    del.push(&spaced);
    redis_cli(&url, &del);
}

/// The database the URL names is the one written to, by the sessions the
/// exclusive pools drive (SELECT when they open) as by the crate's
/// multiplexed connection the slot strategies share; both count a PONG's
/// four bytes.
#[test]
fn redis_sessions_select_the_urls_database() {
    let url = redis_url();
    let in_db5 = format!("{}/5", url.trim_end_matches('/'));
    for strategy in ["pool:2", "shared"] {
        let key = format!("pb{}:{}", std::process::id(), strategy.replace(':', ""));
        let set = format!("SET {key} v-{strategy}");
        let r = run_json(&[
            "run",
            &in_db5,
            "--command",
            &set,
            "-s",
            strategy,
            "-c",
            "2",
            // A count, not a 200 ms window a busy machine's connect
            // could fill (it once answered nothing).
            "-n",
            "20",
            "-d",
            "20s",
        ]);
        assert_eq!(r["cells"][0]["errors"]["total"], 0, "{strategy}");
        assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0, "{strategy}");
        let get = |db: &str| redis_cli(&url, &["-n", db, "GET", &key]).trim().to_string();
        assert_eq!(get("5"), format!("v-{strategy}"), "{strategy}");
        assert_eq!(get("0"), "", "{strategy} wrote to database 0");
        redis_cli(&url, &["-n", "5", "DEL", &key]);
        let r = run_json(&["run", &url, "-s", strategy, "-c", "2", "-n", "100"]);
        let c = &r["cells"][0];
        let requests = c["requests"].as_u64().unwrap();
        assert_eq!(c["body_bytes"].as_u64(), Some(4 * requests), "{strategy}");
    }
}
