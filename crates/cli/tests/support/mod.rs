//! Servers nobody here wrote, for tests: Python's standard library
//! (`recording_server.py`) and grpcio (`grpc_server.py`), and a way to run
//! poolbench against them.
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `support/recording_server.py`, stopped by PID when dropped.
pub struct Recorder {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Recorder {
    pub fn start(name: &str) -> Recorder {
        let dir = std::env::temp_dir().join(format!("poolbench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let port_file = dir.join("port");
        let child = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/support/recording_server.py"
            ))
            .arg(&port_file)
            .spawn()
            .expect("python3 runs");
        let started = Instant::now();
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().parse().unwrap();
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Recorder { child, port, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// What the server was sent, request by request, without poolbench's
    /// look for a remote poolbench server's counters (`/_poolbench/stats`).
    pub fn seen(&self) -> Vec<Value> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(b"GET /__seen HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let body = answer.split_once("\r\n\r\n").unwrap().1;
        let all: Vec<Value> = serde_json::from_str(body).unwrap();
        all.into_iter()
            .filter(|r| !r["path"].as_str().unwrap().starts_with("/_poolbench/"))
            .collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `poolbench run ARGS --format json --quiet` (and `--warmup 0s` unless
/// ARGS sets one), which must
/// succeed; its JSON.
pub fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("run")
        .args(args)
        .args(["--format", "json", "--quiet"])
        .args(match args.contains(&"--warmup") {
            true => &[][..],
            false => &["--warmup", "0s"][..],
        })
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `support/grpc_server.py`: a gRPC server in Python (grpcio) with its own
/// proto (`support/proto/shop/v1/orders.proto`), recording each `Create`
/// request as a JSON line. It stops when its stdin closes (so it dies with
/// the test) and is stopped by PID when dropped.
pub struct PyGrpc {
    child: Child,
    pub port: u16,
    record: PathBuf,
}

/// The directory of the Python gRPC server's protos.
pub const PROTO_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/proto");

impl PyGrpc {
    /// Started with these extra arguments (`--reflection`, `--fail-item N`).
    pub fn start(name: &str, extra: &[&str]) -> PyGrpc {
        use std::io::BufRead;
        let record = std::env::temp_dir().join(format!(
            "poolbench-grpc-{name}-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&record);
        let mut child = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/support/grpc_server.py"
            ))
            .args(["--proto-root", PROTO_ROOT, "--record"])
            .arg(&record)
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the gRPC server did not start: {line:?}"));
        PyGrpc {
            child,
            port,
            record,
        }
    }

    pub fn url(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }

    /// The `Create` requests it received, as proto3 JSON.
    pub fn seen(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for PyGrpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.record);
    }
}

/// A Python server of `tests/support` that prints `PORT N` once listening
/// and stops when its stdin closes; stopped by PID when dropped.
pub struct PortServer {
    child: Child,
    pub port: u16,
}

impl PortServer {
    /// `python3 tests/support/SCRIPT ARGS…`, once it has said its port.
    pub fn start(script: &str, args: &[&str]) -> PortServer {
        let path = format!("{}/tests/support/{script}", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new("python3")
            .arg(path)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("{script} {args:?} did not start: {line:?}"));
        PortServer { child, port }
    }

    /// One command line to the script's stdin.
    pub fn say(&mut self, line: &str) {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().expect("stdin is piped");
        writeln!(stdin, "{line}").expect("the script reads its stdin");
        stdin.flush().unwrap();
    }
}

impl Drop for PortServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
