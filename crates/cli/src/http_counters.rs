//! Reading a remote poolbench server's counters (`poolbench serve`, e.g. in
//! service mode) over its stats endpoint, so a run against it reports what
//! the server saw, including its database pool.
use poolbench_engine::CounterReader;
use poolbench_model::ServerCounters;
use poolbench_server::CounterValues;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// One keep-alive connection to the server's `/_poolbench/` endpoints. The
/// server counts that connection too; `read` leaves it out.
pub(crate) struct HttpCounters {
    addr: SocketAddr,
    host: String,
    conn: Mutex<Option<BufReader<TcpStream>>>,
}

impl HttpCounters {
    /// A reader, if the server at `addr` answers the stats endpoint.
    pub(crate) fn connect(addr: SocketAddr, host: &str) -> Option<HttpCounters> {
        let reader = HttpCounters {
            addr,
            host: host.to_string(),
            conn: Mutex::new(None),
        };
        reader.snapshot().map(|_| reader)
    }

    fn exchange(&self, method: &str, path: &str) -> Option<Vec<u8>> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..2 {
            if guard.is_none() {
                let s = TcpStream::connect_timeout(&self.addr, IO_TIMEOUT).ok()?;
                s.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
                s.set_write_timeout(Some(IO_TIMEOUT)).ok()?;
                let _ = s.set_nodelay(true);
                *guard = Some(BufReader::new(s));
            }
            let conn = guard.as_mut()?;
            match request(conn, method, path, &self.host) {
                Some(body) => return Some(body),
                None => *guard = None,
            }
        }
        None
    }

    fn snapshot(&self) -> Option<CounterValues> {
        let body = self.exchange("GET", "/_poolbench/stats")?;
        serde_json::from_slice(&body).ok()
    }
}

/// One request on a keep-alive connection; the body of a 200 answer.
fn request(
    conn: &mut BufReader<TcpStream>,
    method: &str,
    path: &str,
    host: &str,
) -> Option<Vec<u8>> {
    let head = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\ncontent-length: 0\r\n\r\n");
    conn.get_mut().write_all(head.as_bytes()).ok()?;
    let mut line = String::new();
    conn.read_line(&mut line).ok()?;
    let ok = line.split_whitespace().nth(1) == Some("200");
    let mut length = 0usize;
    loop {
        line.clear();
        if conn.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((name, value)) = l.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    conn.read_exact(&mut body).ok()?;
    ok.then_some(body)
}

impl CounterReader for HttpCounters {
    fn reset(&self) {
        let _ = self.exchange("POST", "/_poolbench/stats/reset");
    }

    fn read(&self) -> ServerCounters {
        let Some(s) = self.snapshot() else {
            return ServerCounters::default();
        };
        let all = ServerCounters::from(s);
        // Without the reader's own connection.
        ServerCounters {
            connections_open: all.connections_open.saturating_sub(1),
            connections_peak: all.connections_peak.saturating_sub(1),
            ..all
        }
    }
}
