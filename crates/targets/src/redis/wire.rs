//! A Redis connection driven by the task that holds it, for strategies that
//! lease a connection to one task at a time: each request is one write of
//! the command (encoded once when it is fixed) and reads to the end of its
//! one reply, as redis-benchmark does. No driver task and no channel
//! between the worker and the socket (the redis crate's multiplexed
//! connection has both; the slot strategies, which pipeline, keep it).
//! Plain TCP in RESP2 only: TLS and RESP3 sessions use the crate.
use super::resp;
use crate::source::Sources;
use crate::{net, ErrorKind, Reply, RequestError};
use bytes::{Buf, BytesMut};
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll, Waker};
use std::thread::ThreadId;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

const READ_SIZE: usize = 8 * 1024;

/// Where and how sessions start: the server, and the commands that open
/// each session (AUTH, SELECT), encoded.
#[derive(Clone, Debug)]
pub(crate) struct SessionSetup {
    pub(crate) addr: SocketAddr,
    pub(crate) connect_timeout: Duration,
    /// Local addresses sessions are bound to in turn (`--source`).
    pub(crate) sources: Sources,
    /// The session's opening commands, each answered before the next.
    pub(crate) hello: Vec<Vec<u8>>,
}

impl SessionSetup {
    /// Sessions bound to `sources` in turn (`--source`).
    pub(crate) fn with_sources(mut self, sources: Sources) -> SessionSetup {
        self.sources = sources;
        self
    }

    /// AUTH (with `username` when given) if there is a `password`, then
    /// SELECT `db` unless it is 0.
    pub(crate) fn new(
        addr: SocketAddr,
        connect_timeout: Duration,
        (username, password): (Option<&str>, Option<&str>),
        db: i64,
    ) -> SessionSetup {
        let mut hello = Vec::new();
        let mut command = |words: &[&str]| {
            let mut out = Vec::new();
            resp::encode_command(words, &mut out);
            hello.push(out);
        };
        match (username, password) {
            (Some(u), Some(p)) => command(&["AUTH", u, p]),
            (None, Some(p)) => command(&["AUTH", p]),
            _ => {}
        }
        if db != 0 {
            command(&["SELECT", &db.to_string()]);
        }
        SessionSetup {
            addr,
            connect_timeout,
            sources: Sources::default(),
            hello,
        }
    }
}

/// One Redis session on one connection.
pub struct RespWire {
    io: TcpStream,
    /// Received, not yet parsed.
    buf: BytesMut,
    /// Has carried a request before.
    reused: bool,
    /// The session ended, or is in an unknown state (a request cut short).
    closed: bool,
    /// The thread whose runtime the socket last moved to ([`net::follow`]).
    home: Option<ThreadId>,
}

impl RespWire {
    /// Connect and send the opening commands; a refusal (a wrong password)
    /// stops the connect.
    pub(crate) async fn open(settings: &SessionSetup) -> Result<RespWire, RequestError> {
        let io =
            net::tcp_connect(&settings.sources, settings.addr, settings.connect_timeout).await?;
        let mut wire = RespWire {
            io,
            buf: BytesMut::with_capacity(READ_SIZE),
            reused: false,
            closed: false,
            home: None,
        };
        for command in &settings.hello {
            let answered = tokio::time::timeout(settings.connect_timeout, wire.exchange(command));
            match answered.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    return Err(RequestError::broken(
                        ErrorKind::Status,
                        format!("Redis session setup: {}", e.message),
                    ))
                }
                Err(_) => {
                    return Err(RequestError::broken(
                        ErrorKind::Timeout,
                        "Redis session setup: timed out",
                    ))
                }
            }
        }
        wire.reused = false;
        Ok(wire)
    }

    /// The session ended or cannot be trusted; checked without waiting. A
    /// RESP2 server says nothing unasked: bytes while idle mean it closed
    /// the connection or is about to.
    pub(crate) fn is_broken(&mut self) -> bool {
        if self.closed {
            return true;
        }
        if net::readiness(&self.io).is_pending() {
            return false;
        }
        let mut cx = Context::from_waker(Waker::noop());
        let mut chunk = [0u8; 64];
        let mut read = ReadBuf::new(&mut chunk);
        match std::pin::Pin::new(&mut self.io).poll_read(&mut cx, &mut read) {
            Poll::Pending => false,
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => false,
            Poll::Ready(_) => true,
        }
    }

    /// Send `request` (one whole command) and read its reply.
    pub(crate) async fn exchange(&mut self, request: &[u8]) -> Result<Reply, RequestError> {
        if self.closed {
            return Err(RequestError::unsent("session closed before the request"));
        }
        if let Err(e) = net::follow(&mut self.io, &mut self.home) {
            self.closed = true;
            return Err(RequestError::unsent(format!(
                "session could not move to this thread: {e}"
            )));
        }
        let reused = std::mem::replace(&mut self.reused, true);
        // Until the reply is read the session's state is unknown.
        self.closed = true;
        if let Err(e) = self.io.write_all(request).await {
            return Err(match reused {
                true => RequestError::unsent(format!("session closed before the request: {e}")),
                false => RequestError::broken(ErrorKind::of_io(&e), e),
            });
        }
        self.read_reply(reused).await
    }

    async fn read_reply(&mut self, reused: bool) -> Result<Reply, RequestError> {
        loop {
            if let Some(p) = resp::parse(&self.buf).map_err(RequestError::protocol)? {
                self.buf.advance(p.len);
                self.closed = false;
                return match p.error {
                    None => Ok(Reply {
                        status: 0,
                        bytes: p.bytes,
                    }),
                    Some(text) => Err(server_error(text)),
                };
            }
            self.buf.reserve(READ_SIZE);
            match self.io.read_buf(&mut self.buf).await {
                Ok(0) if reused && self.buf.is_empty() => {
                    return Err(RequestError::unsent("session closed before the answer"))
                }
                Ok(0) => {
                    return Err(RequestError::broken(
                        ErrorKind::Reset,
                        "the server closed the connection",
                    ))
                }
                Ok(_) => {}
                Err(e) => return Err(RequestError::broken(ErrorKind::of_io(&e), e)),
            }
        }
    }
}

/// An error reply: counted as a status; the session stays usable.
fn server_error(text: String) -> RequestError {
    RequestError {
        kind: ErrorKind::Status,
        broken: false,
        unsent: false,
        message: format!("redis: {text}"),
        code: None,
        sqlstate: None,
    }
}
