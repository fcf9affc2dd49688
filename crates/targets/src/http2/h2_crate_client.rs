//! HTTP/2 client connections on the h2 crate: for tonic's generated
//! clients (the gRPC reflection queries made once before a run), and as
//! the cross-check of the lean client (`--h2-client h2`), whose results
//! should agree with it.
use crate::{ErrorKind, Reply, RequestError};
use bytes::Bytes;
use h2::client::SendRequest;
use h2::{Reason, RecvStream};
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};

/// One HTTP/2 connection, or a handle to one; its protocol task ends when
/// every handle is dropped.
pub struct H2Conn {
    sender: SendRequest<Bytes>,
    closed: Arc<AtomicBool>,
}

impl H2Conn {
    /// The HTTP/2 handshake over `io`. A peer that does not speak HTTP/2
    /// fails here.
    pub(crate) async fn handshake<I>(io: I) -> Result<H2Conn, RequestError>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, mut connection) = h2::client::handshake(io).await.map_err(not_h2)?;
        let ping = connection.ping_pong();
        let closed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closed);
        tokio::spawn(async move {
            let _ = connection.await;
            flag.store(true, Ordering::Release);
        });
        // The server's SETTINGS come before its PONG: its stream limit is
        // known from here on.
        if let Some(mut ping) = ping {
            ping.ping(h2::Ping::opaque()).await.map_err(not_h2)?;
        }
        Ok(H2Conn { sender, closed })
    }

    /// Streams the server lets this connection open at once.
    pub(crate) fn streams(&self) -> usize {
        self.sender
            .current_max_send_streams()
            .clamp(1, crate::http2::state::UNLIMITED_STREAMS)
    }

    /// A second handle to the same connection.
    pub(crate) fn share(&self) -> H2Conn {
        H2Conn {
            sender: self.sender.clone(),
            closed: Arc::clone(&self.closed),
        }
    }

    /// The connection has ended.
    pub(crate) fn is_broken(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Sends `request` and reads the whole answer: its status and body
    /// length; 4xx and 5xx are errors by status.
    pub(crate) async fn request(&self, request: Request<Bytes>) -> Result<Reply, RequestError> {
        let mut sender = self.sender.clone();
        std::future::poll_fn(|cx| sender.poll_ready(cx))
            .await
            .map_err(|e| RequestError::unsent(format!("HTTP/2 connection closed: {e}")))?;
        let (parts, body) = request.into_parts();
        let end = body.is_empty();
        let (response, mut stream) = sender
            .send_request(Request::from_parts(parts, ()), end)
            .map_err(|e| h2_error(&e))?;
        if !end {
            stream.send_data(body, true).map_err(|e| h2_error(&e))?;
        }
        let response = response.await.map_err(|e| h2_error(&e))?;
        let status = response.status().as_u16();
        let mut recv = response.into_body();
        let mut bytes = 0u64;
        while let Some(data) = recv.data().await {
            let data = data.map_err(|e| h2_error(&e))?;
            bytes += data.len() as u64;
            let _ = recv.flow_control().release_capacity(data.len());
        }
        match status {
            400.. => Err(RequestError::status(status)),
            _ => Ok(Reply { status, bytes }),
        }
    }

    /// A tower service sending requests over this connection, for tonic.
    pub(crate) fn service(&self) -> H2Service {
        H2Service {
            sender: self.sender.clone(),
        }
    }
}

/// How an h2 error counts: a stream the server refused unprocessed
/// (REFUSED_STREAM, above a GOAWAY's last stream) may be sent again; I/O
/// errors and GOAWAY end the connection; another reset ends one request.
fn h2_error(e: &h2::Error) -> RequestError {
    let message = format!("HTTP/2: {e}");
    if let Some(io) = e.get_io() {
        return RequestError::broken(ErrorKind::of_io(io), message);
    }
    if e.reason() == Some(Reason::REFUSED_STREAM) || (e.is_go_away() && e.is_remote()) {
        return RequestError::unsent(message);
    }
    match e.is_reset() {
        true => RequestError {
            broken: false,
            ..RequestError::broken(ErrorKind::Reset, message)
        },
        false => RequestError::protocol(message),
    }
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
            // The server may answer and close the stream before the body
            // is sent (a gRPC server refusing an unknown method at once,
            // then resetting the stream): its answer is what counts.
            let unsent = stream.send_data(body, true).err();
            let resp = match (response.await, unsent) {
                (Ok(resp), _) => resp,
                (Err(_), Some(e)) => return Err(e),
                (Err(e), None) => return Err(e),
            };
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
