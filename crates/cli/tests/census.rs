//! `poolbench census` and the limits `tune --replicas` reads, against real
//! servers of the test's own (their limits set low): PostgreSQL with
//! `max_connections` 20, Redis with `maxclients` 50, MariaDB with
//! `max_connections` 30, and the suite's PgBouncer. Connections the test
//! opens itself are found as one group; the limit is read within 10%.
use crate::services::{pgbouncer_session_url, OwnMysql, OwnPostgres, OwnRedis};
use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `poolbench census TARGET ARGS --format json`, which must exit 0.
fn census(target: &str, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["census", target, "--format", "json"])
        .args(args)
        .output()
        .expect("poolbench runs");
    assert!(
        out.status.success(),
        "census {target}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The groups whose application is `app`, their connections summed.
fn group_count(c: &Value, app: &str) -> u64 {
    c["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["application"] == app && g["side"] == "client")
        .map(|g| g["count"].as_u64().unwrap())
        .sum()
}

fn has_finding(c: &Value, id: &str) -> bool {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["id"] == id)
}

/// `n` PostgreSQL sessions named `app`, held open until the runtime is
/// dropped.
fn pg_sessions(
    url: &str,
    app: &str,
    n: usize,
) -> (tokio::runtime::Runtime, Vec<tokio_postgres::Client>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("{url}?application_name={app}");
    let clients = rt.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..n {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .expect("connect to PostgreSQL");
            tokio::spawn(conn);
            client.simple_query("SELECT 1").await.unwrap();
            clients.push(client);
        }
        clients
    });
    (rt, clients)
}

/// PostgreSQL of the test's own with `max_connections` 20 (3 reserved
/// for superusers, its default).
pub fn postgres_with_20_connections(name: &str) -> OwnPostgres {
    let pg = OwnPostgres::start(name);
    crate::services::pg_execute(&pg.url, "ALTER SYSTEM SET max_connections = 20");
    pg.stop();
    pg.restart();
    pg
}

#[test]
fn postgres_limit_groups_and_findings() {
    let pg = postgres_with_20_connections("census-pg");
    let (rt, clients) = pg_sessions(&pg.url, "census-test", 3);
    let c = census(&pg.url, &[]);
    let limit = &c["limit"];
    assert_eq!(limit["server"], "postgresql", "{limit}");
    assert_eq!(limit["max_connections"], 20, "{limit}");
    assert_eq!(limit["reserved"], 3, "{limit}");
    assert_eq!(limit["held_by_others"], 3, "{limit}");
    // 20 − 3 reserved − 3 held = 14.
    let left = limit["connections"].as_u64().unwrap();
    assert!((13..=15).contains(&left), "{limit}");
    assert!(limit["source"]
        .as_str()
        .unwrap()
        .contains("max_connections 20"));
    assert_eq!(group_count(&c, "census-test"), 3, "{}", c["groups"]);
    assert_eq!(c["held"], 3);
    assert!(!has_finding(&c, "near-connection-limit") && !has_finding(&c, "idle-hoard"));
    // 16 of the 17 a client may open: near the limit; idle past 1 s: a hoard.
    let more = pg_sessions(&pg.url, "census-more", 13);
    std::thread::sleep(Duration::from_millis(1500));
    let c = census(&pg.url, &["--idle-after", "1s"]);
    assert_eq!(c["held"], 16, "{}", c["groups"]);
    assert!(
        has_finding(&c, "near-connection-limit"),
        "{}",
        c["findings"]
    );
    assert!(has_finding(&c, "idle-hoard"), "{}", c["findings"]);
    assert_eq!(group_count(&c, "census-more"), 13);
    drop((more, clients, rt));
}

#[test]
fn text_names_the_limit_and_the_groups() {
    let pg = postgres_with_20_connections("census-text");
    let (_rt, _clients) = pg_sessions(&pg.url, "census-text", 2);
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["census", &pg.url])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("max_connections 20 − 3 reserved − 2 held by others = 15"),
        "{text}"
    );
    assert!(text.contains("census-text"), "{text}");
}

/// Redis commands on one connection, each answer read whole enough.
fn redis_conn(url: &str, name: &str) -> std::net::TcpStream {
    let addr = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let cmd = format!(
        "*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n${}\r\n{name}\r\n",
        name.len()
    );
    s.write_all(cmd.as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(
        buf[..n].starts_with(b"+OK"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    s
}

#[test]
fn redis_maxclients_and_client_list() {
    let redis = OwnRedis::redis("census-redis");
    let mut admin = redis_conn(&redis.url, "census-admin");
    admin
        .write_all(b"*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$10\r\nmaxclients\r\n$2\r\n50\r\n")
        .unwrap();
    let mut buf = [0u8; 64];
    let n = admin.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"+OK"));
    let held: Vec<_> = (0..3)
        .map(|_| redis_conn(&redis.url, "census-test"))
        .collect();
    let c = census(&redis.url, &[]);
    let limit = &c["limit"];
    assert_eq!(limit["max_connections"], 50, "{limit}");
    assert_eq!(limit["held_by_others"], 4, "{limit}");
    assert_eq!(limit["connections"], 46, "{limit}");
    assert_eq!(group_count(&c, "census-test"), 3, "{}", c["groups"]);
    drop((held, admin));
}

/// `mariadb` clients each holding a connection (a 30 s sleep), stopped
/// by PID when dropped.
struct Sleepers(Vec<Child>);

impl Drop for Sleepers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn mariadb_max_connections_and_processlist() {
    let db = OwnMysql::mysql("census-mysql");
    let sock = std::env::temp_dir()
        .join(format!("poolbench-census-mysql-{}", std::process::id()))
        .join("mysql/sock");
    let status = Command::new("mariadb")
        .arg("-S")
        .arg(&sock)
        .args([
            "-uroot",
            "-e",
            "SET GLOBAL max_connections = 30; GRANT PROCESS ON *.* TO 'poolbench'@'%'",
        ])
        .status()
        .expect("mariadb runs");
    assert!(status.success());
    let port = db
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let sleepers = Sleepers(
        (0..3)
            .map(|_| {
                Command::new("mariadb")
                    .args([
                        "-h",
                        "127.0.0.1",
                        "-P",
                        &port,
                        "-upoolbench",
                        "-ppoolbench-secret",
                    ])
                    .args(["-e", "SELECT SLEEP(30)"])
                    .arg("--database=poolbench")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    // The three clients' sessions, logged in and querying: awaited (a busy
    // machine's logins took over a second once), 20 s at most.
    let querying = |c: &Value| -> u64 {
        c["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["user"] == "poolbench" && g["state"] == "query")
            .map(|g| g["count"].as_u64().unwrap())
            .sum()
    };
    let waited = std::time::Instant::now();
    let mut c = census(&db.url, &[]);
    while querying(&c) < 3 && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
        c = census(&db.url, &[]);
    }
    let limit = &c["limit"];
    assert_eq!(limit["max_connections"], 30, "{limit}");
    assert_eq!(limit["held_by_others"], 3, "{limit}");
    assert_eq!(limit["connections"], 27, "{limit}");
    assert_eq!(querying(&c), 3, "{}", c["groups"]);
    drop(sleepers);
}

#[test]
fn pgbouncer_config_and_clients_from_its_admin_console() {
    let url = pgbouncer_session_url();
    let (rt, clients) = pg_sessions(&url, "census-bouncer", 3);
    let c = census(&url, &[]);
    let limit = &c["limit"];
    assert_eq!(limit["server"], "pgbouncer", "{limit}");
    assert_eq!(limit["max_connections"], 5000, "{limit}");
    assert_eq!(limit["serves_at_once"], 20, "{limit}");
    assert!(limit["held_by_others"].as_u64().unwrap() >= 3, "{limit}");
    assert_eq!(group_count(&c, "census-bouncer"), 3, "{}", c["groups"]);
    drop((clients, rt));
}

#[test]
fn a_server_that_is_down_or_not_a_database_is_refused_with_one_line() {
    for target in ["postgres://u:p@127.0.0.1:1/db", "http://127.0.0.1:1/"] {
        let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["census", target])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn bad_replicas_and_a_surge_alone_are_refused_before_any_load() {
    for args in [
        &["-c", "4", "--surge", "10"][..],
        &["-c", "4", "--replicas", "8..2"],
        &["-c", "4", "--replicas", "0"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .arg("tune")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
