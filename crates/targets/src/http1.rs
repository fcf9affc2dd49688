//! HTTP/1.1 keep-alive connections over hyper.
use crate::{ErrorKind, Reply, RequestError, Target, TargetSpec};
use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::{Request, Uri};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;

/// Opens HTTP/1.1 connections to one address and sends `GET path`.
#[derive(Clone, Debug)]
pub struct Http1Target {
    addr: SocketAddr,
    host: HeaderValue,
    path: Uri,
    connect_timeout: Duration,
}

/// One HTTP/1.1 connection; its protocol task runs on the runtime that
/// opened it and ends when this is dropped.
pub struct Http1Conn {
    sender: http1::SendRequest<Empty<Bytes>>,
}

impl Http1Target {
    /// A target for `spec`, already resolved to `addr`.
    pub fn new(spec: &TargetSpec, addr: SocketAddr, connect_timeout: Duration) -> Self {
        Http1Target {
            addr,
            host: HeaderValue::from_str(&spec.authority)
                .unwrap_or(HeaderValue::from_static("localhost")),
            path: spec.path.parse().unwrap_or(Uri::from_static("/")),
            connect_timeout,
        }
    }

    fn request(&self) -> Request<Empty<Bytes>> {
        let mut req = Request::new(Empty::new());
        *req.uri_mut() = self.path.clone();
        req.headers_mut().insert(HOST, self.host.clone());
        req
    }
}

impl Connector for Http1Target {
    type Conn = Http1Conn;
    type Error = RequestError;

    async fn connect(&self) -> Result<Http1Conn, RequestError> {
        let stream = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
        handshake(stream).await
    }

    fn is_broken(&self, conn: &mut Http1Conn) -> bool {
        conn.sender.is_closed()
    }
}

impl Target for Http1Target {
    async fn send(&self, conn: &mut Http1Conn) -> Result<Reply, RequestError> {
        if conn.sender.ready().await.is_err() {
            return Err(RequestError {
                unsent: true,
                ..RequestError::broken(ErrorKind::Reset, "connection closed before the request")
            });
        }
        let resp = match conn.sender.try_send_request(self.request()).await {
            Ok(resp) => resp,
            Err(mut e) => {
                let unsent = e.take_message().is_some();
                return Err(RequestError {
                    unsent,
                    ..classify(e.error())
                });
            }
        };
        let status = resp.status().as_u16();
        let mut body = resp.into_body();
        let mut bytes = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| classify(&e))?;
            if let Some(data) = frame.data_ref() {
                bytes += data.len() as u64;
            }
        }
        if status >= 400 {
            return Err(RequestError::status(status));
        }
        Ok(Reply { status, bytes })
    }
}

/// An HTTP/1.1 connection over `io` (TCP or TLS); its protocol task is
/// spawned on the current runtime.
pub(crate) async fn handshake<I>(io: I) -> Result<Http1Conn, RequestError>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| classify(&e))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Http1Conn { sender })
}

/// Count a hyper error by kind.
pub(crate) fn classify(e: &hyper::Error) -> RequestError {
    let kind = if e.is_timeout() {
        ErrorKind::Timeout
    } else if e.is_parse() || e.is_parse_status() || e.is_user() {
        ErrorKind::Protocol
    } else if let Some(io) = find_io(e) {
        ErrorKind::of_io(io)
    } else {
        ErrorKind::Reset
    };
    RequestError::broken(kind, e)
}

fn find_io(e: &hyper::Error) -> Option<&std::io::Error> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        source = s.source();
    }
    None
}
