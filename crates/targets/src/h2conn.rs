//! HTTP/2 client connections on the h2 crate, for `grpc://` and
//! `grpcs://` (tonic sends over them; `h2c://` and `https://` use the lean
//! client in `h2wire`). The h2 crate
//! (unlike hyper) tells the peer's max concurrent streams, which is what a
//! multiplexed connection is worth to the strategies.
use crate::{ErrorKind, RequestError};
use bytes::Bytes;
use h2::client::SendRequest;
use h2::{Ping, Reason, RecvStream};
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};

/// Client-initiated streams one HTTP/2 connection can ever open (odd ids below 2^31).
const UNLIMITED_STREAMS: usize = 1 << 30;

/// One HTTP/2 connection, or a handle to one ([`H2Conn::share`]). Its
/// protocol task runs on the runtime that opened it and ends when every
/// handle is dropped.
pub struct H2Conn {
    sender: SendRequest<Bytes>,
    state: Arc<ConnState>,
}

/// What every handle of one connection shares.
#[derive(Default)]
struct ConnState {
    /// The protocol task has ended.
    closed: AtomicBool,
    /// The peer's max concurrent streams as last read from h2 (0: not yet).
    streams: AtomicUsize,
    /// Calls of [`H2Conn::streams`], to re-read the limit now and then.
    asks: AtomicUsize,
}

/// [`H2Conn::streams`] re-reads the peer's limit (an h2 lock) once per this
/// many calls (a power of two); a change of SETTINGS mid-connection is seen
/// that much later.
const STREAMS_REREAD: usize = 64;

impl H2Conn {
    /// The HTTP/2 handshake over `io`, then one PING round trip: the server's
    /// SETTINGS come before its PONG, so afterwards its max concurrent
    /// streams is known. A peer that does not speak HTTP/2 fails here.
    pub(crate) async fn handshake<I>(io: I) -> Result<H2Conn, RequestError>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, mut connection) = h2::client::handshake(io).await.map_err(not_h2)?;
        let ping = connection.ping_pong();
        let state = Arc::new(ConnState::default());
        let flag = Arc::clone(&state);
        tokio::spawn(async move {
            let _ = YieldFirst::new(connection).await;
            flag.closed.store(true, Ordering::Release);
        });
        if let Some(mut ping) = ping {
            ping.ping(Ping::opaque()).await.map_err(not_h2)?;
        }
        Ok(H2Conn { sender, state })
    }

    /// Streams the peer lets this connection open at once. A peer that
    /// sets no limit allows what the 31-bit stream identifiers do.
    pub(crate) fn streams(&self) -> usize {
        let state = &self.state;
        let known = state.streams.load(Ordering::Relaxed);
        if known > 0 && state.asks.fetch_add(1, Ordering::Relaxed) & (STREAMS_REREAD - 1) != 0 {
            return known;
        }
        let now = self
            .sender
            .current_max_send_streams()
            .clamp(1, UNLIMITED_STREAMS);
        state.streams.store(now, Ordering::Relaxed);
        now
    }

    /// A second handle to the same connection.
    pub(crate) fn share(&self) -> H2Conn {
        H2Conn {
            sender: self.sender.clone(),
            state: Arc::clone(&self.state),
        }
    }

    /// The connection has ended (closed, failed, or drained after GOAWAY).
    pub(crate) fn is_broken(&self) -> bool {
        self.state.closed.load(Ordering::Acquire)
    }

    /// A tower service sending requests over this connection, for tonic.
    pub(crate) fn service(&self) -> H2Service {
        H2Service {
            sender: self.sender.clone(),
        }
    }

    /// Waits until this handle may open a stream: at once unless its last
    /// stream still waits to open. A connection that is closed or going away
    /// gives an unsent error: the request may be retried elsewhere.
    pub(crate) async fn ready(&mut self) -> Result<(), RequestError> {
        poll_fn(|cx| self.sender.poll_ready(cx))
            .await
            .map_err(not_opened)
    }
}

/// Drives a connection's protocol task, yielding once after each wake-up
/// before polling it. The runtime runs a task woken by the running one next,
/// so without this the task would flush each request alone as its sender
/// wakes it; after one yield, the requests of every task woken in the same
/// round (by one read of answers) go out in one write, as h2load's do. The
/// server then reads them in one read too.
struct YieldFirst<F> {
    inner: Pin<Box<F>>,
    yielded: bool,
}

impl<F: Future> YieldFirst<F> {
    fn new(inner: F) -> Self {
        YieldFirst {
            inner: Box::pin(inner),
            yielded: false,
        }
    }
}

impl<F: Future> Future for YieldFirst<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if !self.yielded {
            self.yielded = true;
            // Woken during its own poll, a task goes to the back of the
            // queue (not the slot that runs next).
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.yielded = false;
        self.inner.as_mut().poll(cx)
    }
}

/// A stream that could not be opened: the connection is closed or going away.
fn not_opened(e: h2::Error) -> RequestError {
    RequestError::unsent(format!("HTTP/2 connection closed: {e}"))
}

/// A peer that did not complete the HTTP/2 handshake.
fn not_h2(e: h2::Error) -> RequestError {
    match e.get_io() {
        Some(io) => RequestError::broken(
            ErrorKind::of_io(io),
            format!("not an HTTP/2 server (the HTTP/2 handshake failed: {io})"),
        ),
        None => RequestError::broken(
            ErrorKind::Protocol,
            format!("not an HTTP/2 server (the HTTP/2 handshake failed: {e})"),
        ),
    }
}

/// How an h2 error counts, and whether it ends the connection: I/O errors
/// and GOAWAY do; a stream reset ends one request.
pub(crate) fn kind_of(e: &h2::Error) -> (ErrorKind, bool) {
    match e.get_io() {
        Some(io) => (ErrorKind::of_io(io), true),
        None if e.is_go_away() => (ErrorKind::Reset, true),
        None if e.is_reset() => (ErrorKind::Reset, false),
        None => (ErrorKind::Protocol, true),
    }
}

/// An HTTP/2 connection as a tower service of `http` requests, for the
/// tonic-generated client.
#[derive(Clone)]
pub(crate) struct H2Service {
    sender: SendRequest<Bytes>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<B> tower_service::Service<Request<B>> for H2Service
where
    B: Body<Data = Bytes> + Send + 'static,
{
    type Response = Response<H2Body>;
    type Error = h2::Error;
    type Future = BoxFuture<Result<Response<H2Body>, h2::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), h2::Error>> {
        self.sender.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let (parts, body) = req.into_parts();
        let sent = self
            .sender
            .send_request(Request::from_parts(parts, ()), false);
        Box::pin(async move {
            let (response, mut stream) = sent?;
            // A unary message: the whole body in one DATA frame.
            let body = body
                .collect()
                .await
                .map_err(|_| h2::Error::from(Reason::INTERNAL_ERROR))?
                .to_bytes();
            stream.send_data(body, true)?;
            let resp = response.await?;
            Ok(resp.map(|recv| H2Body {
                recv,
                data_done: false,
            }))
        })
    }
}

/// An h2 response body (data, then trailers) as an `http_body::Body`.
pub(crate) struct H2Body {
    recv: RecvStream,
    data_done: bool,
}

impl Body for H2Body {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = self.get_mut();
        if !this.data_done {
            match ready!(this.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.recv.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => this.data_done = true,
            }
        }
        match ready!(this.recv.poll_trailers(cx)) {
            Ok(Some(trailers)) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Ok(None) => Poll::Ready(None),
            Err(e) => Poll::Ready(Some(Err(e))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}
