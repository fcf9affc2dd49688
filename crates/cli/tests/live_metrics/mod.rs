//! `--metrics-listen` for tests: poolbench started with its metrics on a
//! free loopback port (the address read from its stderr), a scrape of
//! `/metrics`, and a real Prometheus (`scripts/services.sh
//! prometheus-start`, as the docs start it) scraping it every second,
//! queried over its HTTP API.
#![allow(dead_code)] // each test binary (tests, alone) uses its part
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_poolbench");

fn services_sh() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/services.sh")
}

/// A poolbench process with its metrics endpoint; stopped by PID when
/// dropped.
pub struct Watched {
    child: Child,
    /// host:port of its `/metrics`.
    pub metrics: String,
    stdout: Option<ChildStdout>,
}

impl Watched {
    /// `poolbench ARGS --metrics-listen 127.0.0.1:0`, once it has said
    /// where its metrics are.
    pub fn start(args: &[&str]) -> Watched {
        Watched::start_on(args, "127.0.0.1:0")
    }

    /// `poolbench ARGS --metrics-listen LISTEN`; with port 0, once it has
    /// said where its metrics are.
    pub fn start_on(args: &[&str], listen: &str) -> Watched {
        let mut child = Command::new(BIN)
            .args(args)
            .args(["--metrics-listen", listen])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let metrics = loop {
            if !listen.ends_with(":0") {
                break listen.to_string();
            }
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let _ = child.kill();
                let _ = child.wait();
                panic!("poolbench {args:?} ended without a metrics address");
            }
            if let Some(url) = line.trim().strip_prefix("metrics: http://") {
                break url.trim_end_matches("/metrics").to_string();
            }
        };
        // The rest of stderr, read so that the process never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let stdout = child.stdout.take();
        Watched {
            child,
            metrics,
            stdout,
        }
    }

    /// The next line it printed on stdout.
    pub fn stdout_line(&mut self) -> String {
        let stdout = self.stdout.as_mut().unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8];
        // Byte by byte: nothing of later lines is read ahead and lost.
        while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        String::from_utf8(line).unwrap()
    }

    /// Wait for the end; how it ended.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// Wait for the end; its JSON (stdout), which it must have printed
    /// with exit 0.
    pub fn json(mut self) -> Value {
        let mut out = String::new();
        self.stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "exit {status}: {out}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 GET on a connection of its own: status line and body.
pub fn get(addr: &str, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// The exposition at `addr`'s `/metrics`.
pub fn scrape(addr: &str) -> String {
    let (head, body) = get(addr, "/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    body
}

/// `promtool check metrics` on `text`: its exit code and what it said.
pub fn promtool(text: &str) -> (i32, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (the prometheus package: scripts/setup.sh installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The samples of `name` in an exposition: (labels, value).
pub fn samples(text: &str, name: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            (n == name).then(|| (labels.to_string(), value.parse().unwrap()))
        })
        .collect()
}

/// A real Prometheus scraping `targets` every second; stopped by PID
/// (services.sh prometheus-stop) and its directory removed when dropped.
pub struct Prometheus {
    dir: PathBuf,
    /// host:port of its HTTP API.
    pub addr: String,
}

impl Prometheus {
    pub fn start(name: &str, targets: &[&str]) -> Prometheus {
        let dir =
            std::env::temp_dir().join(format!("poolbench-prom-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(services_sh())
            .arg("prometheus-start")
            .arg(&dir)
            .args(targets)
            .output()
            .unwrap();
        // Stopped (by PID) even when the start fails half-way.
        let mut me = Prometheus {
            dir,
            addr: String::new(),
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        me.addr = url.trim_start_matches("http://").to_string();
        me
    }

    /// An instant query's result (`/api/v1/query`): each series' value.
    pub fn query(&self, expr: &str) -> Vec<f64> {
        self.series(expr).into_iter().map(|(_, v)| v).collect()
    }

    /// An instant query's result: each series' labels and value.
    pub fn series(&self, expr: &str) -> Vec<(Value, f64)> {
        let (head, body) = get(&self.addr, &format!("/api/v1/query?query={}", encode(expr)));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{body}");
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let value = r["value"][1].as_str().unwrap().parse().unwrap();
                (r["metric"].clone(), value)
            })
            .collect()
    }

    /// Wait (up to 20 s) until every target has been scraped once, up or
    /// not: Prometheus takes a few seconds to start scraping new targets.
    pub fn wait_for_targets(&self, n: usize) {
        let started = std::time::Instant::now();
        while self.query("up").len() < n {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "Prometheus never scraped its {n} targets"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// How many scrapes of each target succeeded in the last `window`.
    pub fn scrapes(&self, window: &str) -> Vec<f64> {
        self.query(&format!("sum_over_time(up[{window}])"))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = Command::new(services_sh())
            .arg("prometheus-stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback address with a port free now (for a process to bind soon).
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// `s` percent-encoded for a URL's query.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
