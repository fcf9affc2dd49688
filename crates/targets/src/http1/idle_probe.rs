//! How long an HTTP/1.1 server keeps an idle keep-alive connection. What
//! it says first (`Keep-Alive: timeout=N` on an answer); where it says
//! nothing, measured: connections of the probe's own each make one
//! request, sit idle for a gap, and are looked at (end of stream, reset or
//! an unasked answer: closed). The gaps grow by a quarter from 0.5 s to
//! the bound, idle at once (their requests one after another), until one
//! is found closed; then gaps between the last open and the first closed
//! one narrow it to 5%.
use super::Http1Target;
use crate::{ErrorKind, RequestError};
use poolbench_model::{IdleBracket, ServerIdle};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The first gap, and each next one's ratio to it.
const FIRST_GAP: f64 = 0.5;
const GROWTH: f64 = 1.25;
/// Gaps tried between the last open and the first closed one.
const REFINE: usize = 8;
/// The bracket is narrow enough at this share of its upper end.
const NARROW: f64 = 0.05;
fn seconds_left(deadline: Instant) -> f64 {
    deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64()
}

/// How long a look at an idle connection waits for its end of stream.
const LOOK: Duration = Duration::from_millis(5);
/// The largest answer head the probe reads.
const MAX_HEAD: usize = 64 * 1024;

/// What one answer said of keep-alive.
struct Said {
    /// `Keep-Alive: timeout=N`.
    timeout_s: Option<f64>,
    /// The server closes after this answer (`Connection: close`, or a
    /// body delimited by the close).
    closes: bool,
}

impl Http1Target {
    /// The server's idle close: from its `Keep-Alive` header, else
    /// measured with gaps up to `probe` (`None`: not measured), all gaps
    /// ending by `within`.
    pub async fn server_idle(
        &self,
        probe: Option<Duration>,
        within: Duration,
    ) -> Result<ServerIdle, RequestError> {
        let started = Instant::now();
        let (_, said) = self.idle_connection().await?;
        if let Some(s) = said.timeout_s {
            return Ok(ServerIdle {
                idle_close_s: Some(s),
                source: format!("Keep-Alive: timeout={s}"),
                ..ServerIdle::default()
            });
        }
        let mut idle = ServerIdle {
            source: "measured".into(),
            ..ServerIdle::default()
        };
        if said.closes {
            idle.note = Some("the server closes the connection after every answer".into());
            return Ok(idle);
        }
        let Some(max) = probe else {
            idle.source = ServerIdle::NOT_SAID.into();
            idle.note = Some("the server does not say, and it was not measured".into());
            return Ok(idle);
        };
        let (bracket, once) = self.bisect(max, started + within).await?;
        // Closed somewhere between: the middle, to the hundredth.
        idle.idle_close_s = bracket
            .closed_s
            .map(|c| ((bracket.open_s + c) * 50.0).round() / 100.0);
        if let Some(c) = once {
            idle.note = Some(format!(
                "a connection idle {c:.1} s was found closed once, but one idle as long was open when tried again: a passing fault, not the server's idle close"
            ));
        } else if bracket.closed_s.is_none() {
            idle.note = Some(format!(
                "still open after {:.1} s idle, the longest gap tried",
                bracket.open_s
            ));
        }
        idle.measured = Some(bracket);
        Ok(idle)
    }

    /// The gaps, grown then narrowed, each pass only if its longest gap
    /// ends before `deadline`. Each narrowing pass tries the first closed
    /// gap again too, on a new connection: a server's idle close shows
    /// again, while a network fault that cut every connection at once
    /// looks, to one pass, like an idle close at the gap it came in and
    /// then does not. A close not seen again leaves the bracket without
    /// one, and is returned.
    async fn bisect(
        &self,
        max: Duration,
        deadline: Instant,
    ) -> Result<(IdleBracket, Option<f64>), RequestError> {
        let max = max.as_secs_f64().min(seconds_left(deadline));
        let mut gaps = Vec::new();
        let mut g = FIRST_GAP.min(max);
        while g < max {
            gaps.push(g);
            g *= GROWTH;
        }
        gaps.push(max);
        let mut b = IdleBracket {
            open_s: 0.0,
            closed_s: None,
            connections: 0,
        };
        self.pass(&gaps, &mut b).await?;
        let mut narrowed = false;
        while let Some(closed) = b.closed_s {
            let width = closed - b.open_s;
            if (narrowed && width <= NARROW * closed) || closed > seconds_left(deadline) {
                break;
            }
            let step = width / (REFINE + 1) as f64;
            let mut gaps: Vec<f64> = (1..=REFINE).map(|i| b.open_s + step * i as f64).collect();
            gaps.push(closed);
            if !self.pass(&gaps, &mut b).await? {
                b.closed_s = None;
                return Ok((b, Some(closed)));
            }
            narrowed = true;
        }
        Ok((b, None))
    }

    /// Every gap of `gaps` (ascending) on a connection of its own, idle
    /// at once; `b` narrowed by what they show. Stops at the first closed.
    /// Their requests go one at a time: never more than one of the
    /// probe's in flight, so a service that fails with a few more (one
    /// that freezes above its pool) is not pushed over by the probe.
    async fn pass(&self, gaps: &[f64], b: &mut IdleBracket) -> Result<bool, RequestError> {
        let mut found = false;
        let mut set = tokio::task::JoinSet::new();
        for &gap in gaps {
            let (mut stream, _) = self.idle_connection().await?;
            set.spawn(async move {
                tokio::time::sleep(Duration::from_secs_f64(gap)).await;
                Ok::<_, RequestError>((gap, closed(&mut stream).await))
            });
            b.connections += 1;
        }
        while let Some(joined) = set.join_next().await {
            let Ok(looked) = joined else { continue };
            let (gap, closed) = looked?;
            match closed {
                true => {
                    b.closed_s = Some(b.closed_s.map_or(gap, |c: f64| c.min(gap)));
                    found = true;
                    set.abort_all();
                }
                false if b.closed_s.is_none_or(|c| gap < c) => b.open_s = b.open_s.max(gap),
                false => {}
            }
        }
        Ok(found)
    }

    /// A new connection that has carried one request and read its whole
    /// answer (its idle time starts now), and what the answer said.
    async fn idle_connection(&self) -> Result<(TcpStream, Said), RequestError> {
        let mut stream =
            crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        let request = self.request.next().into_owned();
        let exchange = async {
            stream.write_all(&request).await?;
            read_answer(&mut stream, self.request.bodiless_answer()).await
        };
        match tokio::time::timeout(self.connect_timeout.max(Duration::from_secs(5)), exchange).await
        {
            Ok(Ok(said)) => Ok((stream, said)),
            Ok(Err(e)) => Err(RequestError::broken(ErrorKind::of_io(&e), e)),
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                "idle probe: no answer",
            )),
        }
    }
}

/// Has the server closed (or spoken unasked on) this idle connection?
async fn closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    tokio::time::timeout(LOOK, stream.read(&mut byte))
        .await
        .is_ok()
}

fn invalid(what: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.into())
}

/// Read one whole answer: its head, then its body by length or chunks.
async fn read_answer(stream: &mut TcpStream, bodiless: bool) -> std::io::Result<Said> {
    let mut buf = Vec::with_capacity(4096);
    let (head_len, said, length, chunked) = loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(invalid("connection closed before the answer"));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(head) = parse_head(&buf)? {
            break head;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("answer head larger than 64 KiB"));
        }
    };
    let mut said = said;
    let mut body = buf.split_off(head_len);
    match (bodiless, length, chunked) {
        (true, _, _) => {}
        (false, Some(n), _) => {
            while (body.len() as u64) < n {
                let mut chunk = [0u8; 8192];
                let got = stream.read(&mut chunk).await?;
                if got == 0 {
                    return Err(invalid("connection closed inside the body"));
                }
                body.extend_from_slice(&chunk[..got]);
            }
        }
        (false, None, true) => {
            while !body.ends_with(b"0\r\n\r\n") {
                let mut chunk = [0u8; 8192];
                let got = stream.read(&mut chunk).await?;
                if got == 0 {
                    return Err(invalid("connection closed inside the body"));
                }
                body.extend_from_slice(&chunk[..got]);
            }
        }
        (false, None, false) => said.closes = true,
    }
    Ok(said)
}

/// The head's length, what it said of keep-alive, its Content-Length and
/// whether the body is chunked; `None` until the head is whole.
#[allow(clippy::type_complexity)]
fn parse_head(buf: &[u8]) -> std::io::Result<Option<(usize, Said, Option<u64>, bool)>> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut answer = httparse::Response::new(&mut headers);
    let len = match answer.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(invalid(format!("bad answer head: {e}"))),
    };
    let mut said = Said {
        timeout_s: None,
        closes: false,
    };
    let (mut length, mut chunked) = (None, false);
    for h in answer.headers.iter() {
        let value = String::from_utf8_lossy(h.value).to_ascii_lowercase();
        match h.name.to_ascii_lowercase().as_str() {
            "keep-alive" => said.timeout_s = keep_alive_timeout(&value),
            "connection" => said.closes |= value.split(',').any(|v| v.trim() == "close"),
            "content-length" => length = value.trim().parse().ok(),
            "transfer-encoding" => chunked = value.contains("chunked"),
            _ => {}
        }
    }
    if answer.code.is_some_and(|c| c == 204 || c == 304) {
        length = Some(0);
    }
    Ok(Some((len, said, length, chunked)))
}

/// `timeout=N` of a `Keep-Alive` header's value, in seconds.
pub(crate) fn keep_alive_timeout(value: &str) -> Option<f64> {
    value
        .split(',')
        .filter_map(|p| p.trim().strip_prefix("timeout="))
        .find_map(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
}

#[cfg(test)]
mod tests {
    use super::keep_alive_timeout;

    #[test]
    fn reads_the_keep_alive_timeout() {
        assert_eq!(keep_alive_timeout("timeout=5, max=1000"), Some(5.0));
        assert_eq!(keep_alive_timeout("max=100,timeout=15"), Some(15.0));
        assert_eq!(keep_alive_timeout("max=100"), None);
        assert_eq!(keep_alive_timeout("timeout=0"), None);
    }
}
