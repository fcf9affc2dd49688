//! `h2c://`: HTTP/2 with prior knowledge over TCP, on the lean client
//! (`http2::wire`).
pub(crate) mod driver;
pub(crate) mod frame;
pub(crate) mod read;
pub mod wire;

use crate::http2::wire::H2Wire;
use crate::request::{H2Request, HttpRequest};
use crate::{Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use http::Uri;
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;

/// Opens h2c connections to one address and sends the request.
#[derive(Clone, Debug)]
pub struct Http2Target {
    addr: SocketAddr,
    /// The request's header block: encoded once unless it varies.
    request: H2Request,
    connect_timeout: Duration,
}

impl Http2Target {
    /// A target for `spec`, already resolved to `addr`, sending the request
    /// `options.http` describes (GET of the URL's path by default).
    pub fn new(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, TargetError> {
        let request = HttpRequest::for_target(spec, options)?;
        Ok(Http2Target {
            addr,
            request: H2Request::new(&request, false),
            connect_timeout,
        })
    }
}

/// `scheme://authority/path` of `spec`: HTTP/2 sends all three.
pub(crate) fn request_uri(scheme: &str, spec: &TargetSpec) -> Uri {
    format!("{scheme}://{}{}", spec.authority, spec.path)
        .parse()
        .unwrap_or(Uri::from_static("http://localhost/"))
}

/// The HTTP/2 handshake over `io` within `timeout`.
pub(crate) async fn handshake<I>(io: I, timeout: Duration) -> Result<H2Wire, RequestError>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    match tokio::time::timeout(timeout, H2Wire::handshake(io)).await {
        Ok(conn) => conn,
        Err(_) => Err(RequestError::broken(
            crate::ErrorKind::Timeout,
            "HTTP/2 handshake timed out",
        )),
    }
}

impl Connector for Http2Target {
    type Conn = H2Wire;
    type Error = RequestError;

    async fn connect(&self) -> Result<H2Wire, RequestError> {
        let stream = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
        handshake(stream, self.connect_timeout).await
    }

    fn is_broken(&self, conn: &mut H2Wire) -> bool {
        conn.is_broken()
    }

    fn streams(&self, conn: &H2Wire) -> usize {
        conn.streams()
    }

    fn share(&self, conn: &H2Wire) -> Option<H2Wire> {
        Some(conn.share())
    }
}

impl Target for Http2Target {
    async fn send(&self, conn: &mut H2Wire) -> Result<Reply, RequestError> {
        let (block, body) = self.request.next();
        conn.request(&block, body).await
    }
}
