//! HTTP/2 client connections on the h2 crate, for tonic's generated
//! clients: the reflection queries made once before a run (the calls
//! themselves go over the lean client, `http2::wire`).
use crate::{ErrorKind, RequestError};
use bytes::Bytes;
use h2::client::SendRequest;
use h2::{Reason, RecvStream};
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};

/// One HTTP/2 connection; its protocol task ends when the connection is
/// dropped.
pub(crate) struct H2Conn {
    sender: SendRequest<Bytes>,
}

impl H2Conn {
    /// The HTTP/2 handshake over `io`. A peer that does not speak HTTP/2
    /// fails here.
    pub(crate) async fn handshake<I>(io: I) -> Result<H2Conn, RequestError>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, connection) = h2::client::handshake(io).await.map_err(not_h2)?;
        tokio::spawn(connection);
        Ok(H2Conn { sender })
    }

    /// A tower service sending requests over this connection, for tonic.
    pub(crate) fn service(&self) -> H2Service {
        H2Service {
            sender: self.sender.clone(),
        }
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
