//! The built-in server a step starts: `poolbench serve` as a child process
//! on free loopback ports (so it does not share the load generator's
//! runtime), stopped by its PID when the step ends.
use crate::Failure;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub(crate) struct Server {
    child: Child,
    pub(crate) http: String,
    pub(crate) grpc: Option<String>,
}

/// Service mode seeds its table first: allow for it.
const START: Duration = Duration::from_secs(60);

impl Server {
    pub(crate) fn start(args: &[String], grpc: bool) -> Result<Server, Failure> {
        let exe = std::env::current_exe()
            .map_err(|e| Failure::runtime(format!("cannot find poolbench itself: {e}")))?;
        let mut child = Command::new(exe)
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Failure::runtime(format!("cannot start poolbench serve: {e}")))?;
        crate::signals::adopt(child.id());
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            http: String::new(),
            grpc: None,
        };
        let deadline = std::time::Instant::now() + START;
        while server.http.is_empty() || (grpc && server.grpc.is_none()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(a) = line.strip_prefix("http ") {
                        server.http = a.trim().to_string();
                    } else if let Some(a) = line.strip_prefix("grpc ") {
                        server.grpc = Some(a.trim().to_string());
                    }
                }
                Err(_) => return Err(server.failed()),
            }
        }
        Ok(server)
    }

    /// Why the server did not start: its own last line.
    fn failed(&mut self) -> Failure {
        let _ = self.child.kill();
        let out = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        let why = err.lines().last().unwrap_or("no answer").to_string();
        match out {
            Ok(s) if s.code() == Some(2) => Failure::input(format!("poolbench serve: {why}")),
            _ => Failure::runtime(format!("poolbench serve did not start: {why}")),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::signals::release(self.child.id());
    }
}
