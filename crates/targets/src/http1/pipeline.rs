//! The pipelining probe: D requests written at once on one HTTP/1.1
//! connection, and how many responses each read brings. A server that
//! answers pipelined requests in one write shows several per read.
//!
//! With `order` the requests alternate GET and HEAD: an answer to HEAD
//! carries no body whatever its content-length says, so answers that come
//! out of order (a GET's in a HEAD's place, or the reverse) no longer
//! frame, and the probe says so instead of counting them. Without it every
//! request is the GET the load sends: how a server writes its answers can
//! depend on the request (nginx sends a HEAD's answer at once, a GET's
//! with the others), and the batching is measured on what the load gets.
use crate::source::Sources;
use poolbench_model::PipelineProbe;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Rounds of D pipelined requests the probe sends.
const ROUNDS: usize = 20;

/// Probe `addr` with `depth` pipelined `GET path` requests per round (every
/// other one a HEAD with `order`), from the first of `sources` (where the
/// kernel picks when there are none).
pub async fn probe(
    sources: &Sources,
    addr: SocketAddr,
    (host, path): (&str, &str),
    depth: usize,
    order: bool,
    timeout: Duration,
) -> Result<PipelineProbe, String> {
    let head_at = |i: usize| order && i % 2 == 1;
    let mut out = PipelineProbe {
        depth,
        rounds: ROUNDS,
        reads: 0,
        responses: 0,
        batched_reads: 0,
        mean_per_read: 0.0,
    };
    let run = async {
        let out = &mut out;
        let mut stream = sources.connect(addr).await.map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let request: String = (0..depth)
            .map(|i| {
                let method = if head_at(i) { "HEAD" } else { "GET" };
                format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\n\r\n")
            })
            .collect();
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut chunk = vec![0u8; 64 * 1024];
        for _ in 0..ROUNDS {
            stream
                .write_all(request.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            let mut done = 0;
            while done < depth {
                let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err(format!(
                        "it closed the connection after {}",
                        answers(out.responses)
                    ));
                }
                buf.extend_from_slice(&chunk[..n]);
                let complete = take_responses(&mut buf, |k| head_at(done + k))?;
                if complete > 0 {
                    out.reads += 1;
                    out.responses += complete as u64;
                    if complete > 1 {
                        out.batched_reads += 1;
                    }
                }
                done += complete;
            }
        }
        out.mean_per_read = out.responses as f64 / out.reads.max(1) as f64;
        Ok(())
    };
    match tokio::time::timeout(timeout, run).await {
        Ok(done) => done.map(|()| out),
        // A server that reads one request and then stops reading (or
        // answering) leaves the rest unanswered, the connection open.
        Err(_) if out.responses > 0 => Err(format!(
            "it stopped answering after {} (nothing more within {timeout:?}, the connection open)",
            answers(out.responses)
        )),
        Err(_) => Err(format!("no answer within {timeout:?}")),
    }
}

/// "1 answer", "N answers".
fn answers(n: u64) -> String {
    format!("{n} answer{}", if n == 1 { "" } else { "s" })
}

/// Remove every complete response at the front of `buf`; return how many
/// (`is_head(k)`: the k-th of them answers a HEAD).
fn take_responses(buf: &mut Vec<u8>, is_head: impl Fn(usize) -> bool) -> Result<usize, String> {
    let mut taken = 0;
    let mut consumed = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut resp = httparse::Response::new(&mut headers);
        let head = match resp.parse(&buf[consumed..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => break,
            Err(e) => {
                return Err(format!(
                    "its answers did not frame as the requests written (GET and HEAD alternated): \
                 answered out of order or garbled ({e})"
                ))
            }
        };
        // An answer to HEAD has no body, whatever its content-length.
        let length = match is_head(taken) {
            true => 0,
            false => resp
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
                .ok_or("the probe needs content-length responses")?,
        };
        if buf.len() - consumed < head + length {
            break;
        }
        consumed += head + length;
        taken += 1;
    }
    buf.drain(..consumed);
    Ok(taken)
}
