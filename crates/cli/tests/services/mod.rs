//! Real PostgreSQL, Redis and MariaDB for the tests: scripts/test.sh starts
//! them and hands over their URLs; a test that needs them and finds none
//! fails.
#![allow(dead_code)] // each test binary (tests, alone) uses its part
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn env_url(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run the tests via scripts/test.sh, which starts PostgreSQL, Redis and MariaDB")
    })
}

/// `postgres://` URL of the throwaway PostgreSQL.
pub fn pg_url() -> String {
    env_url("POOLBENCH_PG_URL")
}

/// `mysql://` URL of the throwaway MariaDB.
pub fn mysql_url() -> String {
    env_url("POOLBENCH_MYSQL_URL")
}

/// The API of the throwaway toxiproxy (`http://127.0.0.1:PORT`).
pub fn toxiproxy_url() -> String {
    env_url("POOLBENCH_TOXIPROXY_URL")
}

/// `redis://` URL of the throwaway Redis.
pub fn redis_url() -> String {
    env_url("POOLBENCH_REDIS_URL")
}

/// `rediss://` URL of the same Redis's TLS port.
pub fn rediss_url() -> String {
    env_url("POOLBENCH_REDISS_URL")
}

/// The directory of the throwaway PostgreSQL's Unix socket.
pub fn pg_socket_dir() -> String {
    env_url("POOLBENCH_PG_SOCKET_DIR")
}

/// The CA that signed both servers' certificates (for localhost and
/// 127.0.0.1).
pub fn test_ca() -> String {
    env_url("POOLBENCH_TEST_CA")
}

/// nginx's HTTP/1.1 and h2c URLs.
pub fn nginx_urls() -> (String, String) {
    (
        env_url("POOLBENCH_NGINX_URL"),
        env_url("POOLBENCH_NGINX_H2C_URL"),
    )
}

/// nginx's HTTP/1.1 server that closes idle connections after 3 s
/// (`keepalive_timeout 3s`, no Keep-Alive header).
pub fn nginx_keepalive_url() -> String {
    env_url("POOLBENCH_NGINX_KEEPALIVE_URL")
}

/// nginx over TLS: its URLs (sessions resumable; a self-signed
/// CA-flagged certificate; client certificates required) and the files
/// (the self-signed certificate, a client certificate and key signed by
/// the test CA).
pub struct NginxTls {
    pub url: String,
    pub self_signed_url: String,
    pub mtls_url: String,
    /// A server that speaks TLS 1.2 only.
    pub tls12_url: String,
    pub self_signed: String,
    pub client_cert: String,
    pub client_key: String,
}

/// nginx's TLS servers and the files to talk to them.
pub fn nginx_tls() -> NginxTls {
    NginxTls {
        url: env_url("POOLBENCH_NGINX_TLS_URL"),
        self_signed_url: env_url("POOLBENCH_NGINX_SELF_URL"),
        mtls_url: env_url("POOLBENCH_NGINX_MTLS_URL"),
        tls12_url: env_url("POOLBENCH_NGINX_TLS12_URL"),
        self_signed: env_url("POOLBENCH_TEST_SELF_SIGNED"),
        client_cert: env_url("POOLBENCH_TEST_CLIENT_CERT"),
        client_key: env_url("POOLBENCH_TEST_CLIENT_KEY"),
    }
}

/// `poolbench ARGS`, which must fail; its exit code and stderr.
pub fn run_failing(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .args(["--format", "json", "--quiet"])
        .output()
        .expect("poolbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "poolbench {args:?} succeeded");
    assert!(out.stdout.is_empty(), "a result despite failing: {stderr}");
    (out.status.code(), stderr)
}

/// scripts/services.sh, to start an instance of one's own.
pub fn services_script() -> PathBuf {
    PathBuf::from(env_url("POOLBENCH_SERVICES"))
}

/// `poolbench ARGS --format json`, which must succeed; its result.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .args(["--format", "json", "--quiet"])
        .output()
        .expect("poolbench runs");
    assert!(
        out.status.success(),
        "poolbench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// `poolbench tune ARGS --format json --quiet`, which must exit with one
/// of `codes` (0: a pool recommended, 1: none); its result and wall time
/// in seconds. A wrong exit prints every point measured.
pub fn tune_json(args: &[&str], codes: &[i32]) -> (serde_json::Value, f64) {
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("tune")
        .args(args)
        .args(["--format", "json", "--quiet"])
        .output()
        .expect("poolbench runs");
    let wall = started.elapsed().as_secs_f64();
    let json: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "tune {args:?} exited {:?}: {}after {wall:.0} s, the points:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        json.as_ref().map(tune_trail).unwrap_or_default()
    );
    (json.expect("JSON"), wall)
}

/// A tune result's points, a line each, for a failing assertion's message.
pub fn tune_trail(r: &serde_json::Value) -> String {
    let points = r["points"].as_array().cloned().unwrap_or_default();
    points
        .iter()
        .map(|p| {
            format!(
                "{} {} c={} {} req/s p99 {} us, {} requests, {} errors\n",
                p["phase"],
                p["strategy"],
                p["in_flight"],
                p["throughput_rps"],
                p["p99_us"],
                p["requests"],
                p["errors"]
            )
        })
        .collect()
}

/// A query on a fresh connection; the first column of the first row.
pub fn pg_scalar(url: &str, sql: &str) -> i64 {
    let messages = simple_query(url, sql).expect(sql);
    let row = messages
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no row from {sql}"));
    let text = row.get(0).unwrap_or_else(|| panic!("NULL from {sql}"));
    text.parse()
        .unwrap_or_else(|e| panic!("{sql} gave {text:?}: {e}"))
}

/// Run `sql` on a fresh connection; an error (e.g. "already exists") is
/// ignored.
pub fn pg_execute(url: &str, sql: &str) {
    let _ = simple_query(url, sql);
}

/// `sql` over the simple protocol on a fresh connection, closed after.
fn simple_query(
    url: &str,
    sql: &str,
) -> Result<Vec<tokio_postgres::SimpleQueryMessage>, tokio_postgres::Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect to PostgreSQL");
        let task = tokio::spawn(conn);
        let result = client.simple_query(sql).await;
        drop(client);
        let _ = task.await;
        result
    })
}

/// Connections Redis has accepted since it started (this query's included).
pub fn redis_connections_received(url: &str) -> u64 {
    use std::io::{Read, Write};
    let addr = url
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string();
    let mut s = std::net::TcpStream::connect(&addr).expect("connect to Redis");
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(b"INFO stats\r\n").unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    while !text.contains("total_connections_received:") || !text.ends_with("\r\n") {
        let n = s.read(&mut buf).expect("INFO answers");
        assert!(n > 0, "Redis closed the connection");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("total_connections_received")
}

/// `poolbench serve ARGS` on a free port, stopped (by PID) when dropped.
pub struct Serve {
    child: Child,
    pub addr: String,
    /// Every listener's `KIND ADDR` line (`http`, then `grpc`, `tls`).
    lines: Vec<String>,
}

impl Serve {
    pub fn start(args: &[&str]) -> Serve {
        Serve::start_listening(args, 1)
    }

    /// With `listeners` lines to read: `--grpc-listen 127.0.0.1:0` and
    /// `--tls-listen` add one each.
    pub fn start_listening(args: &[&str], listeners: usize) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("poolbench serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let lines: Vec<String> = (0..listeners)
            .map(|_| {
                out.next()
                    .and_then(Result::ok)
                    .unwrap_or_else(|| panic!("poolbench serve {args:?} printed too little"))
            })
            .collect();
        let addr = lines[0]
            .strip_prefix("http ")
            .expect("`http ADDR` on the first line")
            .trim_end()
            .to_string();
        // Keep reading so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in out {});
        Serve { child, addr, lines }
    }

    /// The address of the `kind` listener (`grpc`, `tls`).
    pub fn listener(&self, kind: &str) -> String {
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{kind} ")))
            .unwrap_or_else(|| panic!("no `{kind} ADDR` in {:?}", self.lines))
            .trim()
            .to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A PostgreSQL of the test's own (so stopping it disturbs no other test),
/// stopped and removed when dropped.
pub struct OwnPostgres {
    dir: PathBuf,
    pub url: String,
    kind: &'static str,
}

/// A Redis of the test's own, the same way (`stop` kills it at once).
pub type OwnRedis = OwnPostgres;

/// A MariaDB of the test's own, the same way (`stop` kills it at once).
pub type OwnMysql = OwnPostgres;

impl OwnPostgres {
    pub fn start(name: &str) -> OwnPostgres {
        Self::start_kind(name, "pg")
    }

    pub fn redis(name: &str) -> OwnRedis {
        Self::start_kind(name, "redis")
    }

    pub fn mysql(name: &str) -> OwnMysql {
        Self::start_kind(name, "mysql")
    }

    fn start_kind(name: &str, kind: &'static str) -> OwnPostgres {
        let dir = std::env::temp_dir().join(format!("poolbench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(services_script())
            .arg("start")
            .arg(&dir)
            .arg(kind)
            .output()
            .expect("services.sh runs");
        assert!(
            out.status.success(),
            "services.sh start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .expect("a URL")
            .to_string();
        OwnPostgres { dir, url, kind }
    }

    fn script(&self, cmd: &str) {
        let status = Command::new(services_script())
            .arg(cmd)
            .arg(&self.dir)
            .status()
            .expect("services.sh runs");
        assert!(status.success(), "services.sh {cmd} failed");
    }

    /// Its directory (services.sh's DIR: sockets, logs, data).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    pub fn stop(&self) {
        self.script(&format!("{}-stop", self.kind));
    }

    pub fn restart(&self) {
        self.script(&format!("{}-start", self.kind));
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = Command::new(services_script())
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A result as `poolbench report --format html` renders it, saved as
/// `name` in the temp dir for the while.
pub fn html_of(result: &serde_json::Value, name: &str) -> String {
    let saved = std::env::temp_dir().join(format!("poolbench-{name}-{}.json", std::process::id()));
    std::fs::write(&saved, result.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["report", "--format", "html"])
        .arg(&saved)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&saved);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// PgBouncer in session mode in front of the throwaway PostgreSQL (a pool
/// of 20 server connections).
pub fn pgbouncer_session_url() -> String {
    env_url("POOLBENCH_PGBOUNCER_SESSION_URL")
}

/// PgBouncer in transaction mode in front of the throwaway PostgreSQL (a
/// pool of 20 server connections).
pub fn pgbouncer_tx_url() -> String {
    env_url("POOLBENCH_PGBOUNCER_TX_URL")
}

/// Every strategy of a database target at size 3 (2+2, 2x2), the library
/// baselines included.
pub const EVERY_STRATEGY: &str = "per-request,shared,round-robin:3,least-loaded:3,pool:3,\
elastic:2+2,take-or-create:3,partitioned:2x2,deadpool:3,bb8:3";

/// `want` cells, each with successful requests and no error.
pub fn assert_all_cells_work(result: &serde_json::Value, want: usize) {
    let cells = result["cells"].as_array().unwrap();
    assert_eq!(cells.len(), want, "one cell per strategy");
    for c in cells {
        assert!(
            c["ok"].as_u64().unwrap() > 0 && c["errors"]["total"] == 0,
            "{} failed: {}",
            c["strategy"],
            c["errors"]
        );
    }
}

/// The cell of `strategy` in a result.
pub fn cell_of<'a>(r: &'a serde_json::Value, strategy: &str) -> &'a serde_json::Value {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["strategy"] == strategy)
        .unwrap_or_else(|| panic!("no cell {strategy}: {r}"))
}

/// The finding `id` of a result, if it names one.
pub fn finding_of<'a>(r: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    r["findings"].as_array()?.iter().find(|f| f["id"] == id)
}
