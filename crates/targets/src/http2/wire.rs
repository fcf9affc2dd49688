//! A lean HTTP/2 client connection (`h2c://`, and
//! `https://` when ALPN picks h2, `grpc://`, `grpcs://`).
//!
//! One driver task per connection owns the socket: it writes what the
//! request handles queued and reads the server's frames. A request is one
//! pre-encoded HEADERS frame appended to the connection's out buffer under a
//! lock; its answer is a status and a byte count the driver records for it.
//! The general machinery of the h2 crate (stream state machines, header maps,
//! a fresh HPACK encoding per request, per-stream flow control) cost about
//! four fifths of a request's client CPU, which is what the peers compared
//! with (h2load) do not spend.
use crate::http2::driver::Driver;
use crate::http2::frame as f;
use crate::http2::state::{Shared, State, Stream, UNLIMITED_STREAMS};
use crate::{Reply, RequestError};
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};

/// One HTTP/2 connection, or a handle to one (`H2Wire::share`). Its
/// driver task ends when every handle is dropped and no stream is open.
pub struct H2Wire {
    shared: Arc<Shared>,
    /// When the answer to this handle's last request began to arrive.
    first_byte: Option<Instant>,
}

impl H2Wire {
    /// The HTTP/2 handshake over `io`: the preface and SETTINGS, then one
    /// PING round trip, so the server's SETTINGS (its max concurrent
    /// streams) are known before the first request. A peer that does not
    /// speak HTTP/2 fails here.
    pub(crate) async fn handshake<I>(io: I) -> Result<H2Wire, RequestError>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                out: Vec::with_capacity(4096),
                driver: None,
                next_id: 1,
                open: HashMap::default(),
                goaway: None,
                ended: None,
                send_window: i64::from(f::INITIAL_WINDOW),
                initial_window: i64::from(f::INITIAL_WINDOW),
                max_frame: f::MAX_FRAME,
                pending: VecDeque::new(),
                max_streams: UNLIMITED_STREAMS,
                capacity: Vec::new(),
            }),
            broken: AtomicBool::new(false),
            streams: AtomicUsize::new(UNLIMITED_STREAMS),
            handles: AtomicUsize::new(1),
        });
        let mut driver = Driver::new(io, Arc::clone(&shared));
        poll_fn(|cx| driver.poll_handshake(cx)).await?;
        tokio::spawn(driver);
        Ok(H2Wire {
            shared,
            first_byte: None,
        })
    }

    /// Streams the peer lets this connection open at once.
    pub(crate) fn streams(&self) -> usize {
        self.shared.streams.load(Ordering::Relaxed)
    }

    /// A second handle to the same connection.
    pub(crate) fn share(&self) -> H2Wire {
        self.shared.handles.fetch_add(1, Ordering::Relaxed);
        H2Wire {
            shared: Arc::clone(&self.shared),
            first_byte: None,
        }
    }

    /// The connection has ended, failed, or is going away.
    pub(crate) fn is_broken(&self) -> bool {
        self.shared.broken.load(Ordering::Acquire)
    }

    /// Sends the request whose header block is `block`, then `body` as
    /// DATA as fast as the server's flow-control windows allow, and reads
    /// the whole answer; 4xx and 5xx are errors by status. Dropped before
    /// the answer, the request's stream is reset (CANCEL).
    pub(crate) async fn request(
        &mut self,
        block: &[u8],
        body: Option<Arc<[u8]>>,
    ) -> Result<Reply, RequestError> {
        let stream = self.exchange(block, body).await?;
        match stream.status {
            0 => Err(RequestError {
                broken: false,
                ..RequestError::protocol("HTTP/2 answer without :status")
            }),
            400.. => Err(RequestError::status(stream.status)),
            status => Ok(Reply {
                status,
                bytes: stream.bytes,
            }),
        }
    }

    /// A gRPC call: as [`H2Wire::request`], but the outcome is the
    /// answer's `grpc-status` (in its trailers, or a trailers-only answer);
    /// a status other than OK is an error counted by its code. The reply's
    /// status is the gRPC code (0).
    pub(crate) async fn call(
        &mut self,
        block: &[u8],
        body: Option<Arc<[u8]>>,
    ) -> Result<Reply, RequestError> {
        let stream = self.exchange(block, body).await?;
        match stream.grpc {
            Some((0, _)) => Ok(Reply {
                status: 0,
                bytes: stream.bytes,
            }),
            Some((code, message)) => Err(RequestError::grpc(code, &message)),
            None if stream.status != 200 => Err(RequestError {
                broken: false,
                ..RequestError::protocol(format!(
                    "not a gRPC answer: HTTP status {} without grpc-status",
                    stream.status
                ))
            }),
            None => Err(RequestError {
                broken: false,
                ..RequestError::protocol("gRPC answer without grpc-status")
            }),
        }
    }

    /// When the answer to this handle's last request began to arrive.
    pub(crate) fn first_byte(&self) -> Option<Instant> {
        self.first_byte
    }

    /// Sends a request and waits for the whole answer (and notes when
    /// its first frame came).
    async fn exchange(
        &mut self,
        block: &[u8],
        body: Option<Arc<[u8]>>,
    ) -> Result<Stream, RequestError> {
        self.first_byte = None;
        let stream = self.exchange_whole(block, body).await?;
        self.first_byte = stream.first_byte;
        Ok(stream)
    }

    async fn exchange_whole(
        &self,
        block: &[u8],
        body: Option<Arc<[u8]>>,
    ) -> Result<Stream, RequestError> {
        let mut body = Some(body);
        let id = poll_fn(|cx| self.poll_open(cx, block, &mut body)).await?;
        let mut waiting = Waiting {
            shared: &self.shared,
            id,
            done: false,
        };
        poll_fn(|cx| waiting.poll(cx)).await
    }

    /// Queues the HEADERS of a new stream and wakes the driver. At the
    /// server's limit of concurrent streams (0 included) it waits for one
    /// to close or the limit to rise, rather than have the stream refused.
    fn poll_open(
        &self,
        cx: &mut Context<'_>,
        block: &[u8],
        body: &mut Option<Option<Arc<[u8]>>>,
    ) -> Poll<Result<u32, RequestError>> {
        let mut state = self.shared.lock();
        if let Some(why) = &state.ended {
            return Poll::Ready(Err(RequestError::unsent(format!(
                "HTTP/2 connection closed: {why}"
            ))));
        }
        if state.goaway.is_some() {
            return Poll::Ready(Err(RequestError::unsent(
                "the server is going away (GOAWAY)",
            )));
        }
        if state.open.len() >= state.max_streams {
            state.capacity.push(cx.waker().clone());
            return Poll::Pending;
        }
        let body = body.take().flatten().filter(|b| !b.is_empty());
        let id = state.next_id;
        if id > f::MAX_WINDOW {
            self.shared.broken.store(true, Ordering::Release);
            return Poll::Ready(Err(RequestError::unsent(
                "the connection's stream ids are used up",
            )));
        }
        state.next_id += 2;
        put_headers(&mut state.out, id, block, body.is_none());
        let window = state.initial_window;
        state.open.insert(
            id,
            Stream {
                window,
                body,
                ..Stream::default()
            },
        );
        if state.open[&id].body.is_some() {
            state.pending.push_back(id);
            state.pump();
        }
        let driver = state.driver.take();
        drop(state);
        if let Some(driver) = driver {
            driver.wake();
        }
        Poll::Ready(Ok(id))
    }
}

impl Drop for H2Wire {
    fn drop(&mut self) {
        if self.shared.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            let driver = self.shared.lock().driver.take();
            if let Some(driver) = driver {
                driver.wake();
            }
        }
    }
}

/// HEADERS carrying `block` (END_STREAM when no body follows), split into
/// CONTINUATION frames if it is larger than a frame.
fn put_headers(out: &mut Vec<u8>, id: u32, block: &[u8], end_stream: bool) {
    let mut chunks = block.chunks(f::MAX_FRAME).peekable();
    let mut kind = f::HEADERS;
    let end = if end_stream { f::END_STREAM } else { 0 };
    let mut flags = end;
    while let Some(chunk) = chunks.next() {
        if chunks.peek().is_none() {
            flags |= f::END_HEADERS;
        }
        f::put_head(out, chunk.len(), kind, flags, id);
        out.extend_from_slice(chunk);
        kind = f::CONTINUATION;
        flags = 0;
    }
    if block.is_empty() {
        f::put_head(out, 0, f::HEADERS, end | f::END_HEADERS, id);
    }
}

/// A request waiting for its answer.
struct Waiting<'a> {
    shared: &'a Shared,
    id: u32,
    done: bool,
}

impl Waiting<'_> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<Stream, RequestError>> {
        let mut state = self.shared.lock();
        let Some(stream) = state.open.get_mut(&self.id) else {
            self.done = true;
            return Poll::Ready(Err(RequestError::protocol("HTTP/2 stream lost")));
        };
        if stream.outcome.is_none() {
            if !stream
                .waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                stream.waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let stream = state.open.remove(&self.id).unwrap_or_default();
        state.wake_capacity();
        // Answered before the whole body went: stop sending it (the server
        // needs no more), and end the stream so it does not stay open.
        let driver = match stream.body.is_some() && state.ended.is_none() {
            true => {
                f::put_u32_frame(&mut state.out, f::RST_STREAM, self.id, f::CANCEL);
                state.driver.take()
            }
            false => None,
        };
        drop(state);
        if let Some(driver) = driver {
            driver.wake();
        }
        self.done = true;
        Poll::Ready(match stream.outcome {
            Some(Err(e)) => Err(e),
            _ => Ok(stream),
        })
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut state = self.shared.lock();
        let removed = state.open.remove(&self.id);
        if removed.is_some() {
            state.wake_capacity();
        }
        let unanswered = removed.is_some_and(|s| s.outcome.is_none());
        if !unanswered || state.ended.is_some() {
            return;
        }
        f::put_u32_frame(&mut state.out, f::RST_STREAM, self.id, f::CANCEL);
        let driver = state.driver.take();
        drop(state);
        if let Some(driver) = driver {
            driver.wake();
        }
    }
}
