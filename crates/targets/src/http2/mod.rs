//! `h2c://`: HTTP/2 with prior knowledge over TCP, on the lean client
//! (`http2::wire`), or on the h2 crate's (`--h2-client h2`) to cross-check
//! it.
pub(crate) mod driver;
pub(crate) mod frame;
pub(crate) mod frame_events;
pub(crate) mod h2_crate_client;
pub(crate) mod hpack;
pub(crate) mod state;
pub mod wire;

use crate::http2::h2_crate_client::H2Conn;
use crate::http2::wire::H2Wire;
use crate::request::{H2Request, HttpRequest};
use crate::source::Sources;
use crate::{Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use bytes::Bytes;
use http::Uri;
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Opens h2c connections to one address and sends the request.
#[derive(Clone, Debug)]
pub struct Http2Target {
    addr: SocketAddr,
    /// The request's header block: encoded once unless it varies.
    request: H2Request,
    /// With `--h2-client h2`: the request, built per send for the h2 crate.
    crate_request: Option<Arc<HttpRequest>>,
    connect_timeout: Duration,
    sources: Sources,
}

/// An h2c connection on either client.
pub enum H2cConn {
    Lean(H2Wire),
    Crate(H2Conn),
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
            crate_request: options.h2_crate.then(|| Arc::new(request)),
            connect_timeout,
            sources: Sources::default(),
        })
    }

    /// Connections bound to `sources` in turn (`--source`).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
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

impl Http2Target {
    /// The request as the h2 crate sends it.
    fn crate_request(r: &HttpRequest) -> Result<http::Request<Bytes>, RequestError> {
        let seq = r.next_seq();
        let path = String::from_utf8_lossy(&r.path.rendered(seq)).into_owned();
        let mut b = http::Request::builder()
            .method(r.method.as_str())
            .uri(format!("http://{}{path}", r.authority));
        for (name, value) in &r.headers {
            b = b.header(name.as_str(), value.rendered(seq));
        }
        let body = r.body.as_ref().map(|t| t.rendered(seq)).unwrap_or_default();
        b.body(Bytes::from(body))
            .map_err(|e| RequestError::protocol(format!("request: {e}")))
    }
}

impl Connector for Http2Target {
    type Conn = H2cConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<H2cConn, RequestError> {
        let stream =
            crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        if self.crate_request.is_none() {
            return handshake(stream, self.connect_timeout)
                .await
                .map(H2cConn::Lean);
        }
        match tokio::time::timeout(self.connect_timeout, H2Conn::handshake(stream)).await {
            Ok(conn) => conn.map(H2cConn::Crate),
            Err(_) => Err(RequestError::broken(
                crate::ErrorKind::Timeout,
                "HTTP/2 handshake timed out",
            )),
        }
    }

    fn is_broken(&self, conn: &mut H2cConn) -> bool {
        match conn {
            H2cConn::Lean(c) => c.is_broken(),
            H2cConn::Crate(c) => c.is_broken(),
        }
    }

    fn streams(&self, conn: &H2cConn) -> usize {
        match conn {
            H2cConn::Lean(c) => c.streams(),
            H2cConn::Crate(c) => c.streams(),
        }
    }

    fn advertised_streams(&self, conn: &H2cConn) -> Option<usize> {
        Some(self.streams(conn))
    }

    fn share(&self, conn: &H2cConn) -> Option<H2cConn> {
        Some(match conn {
            H2cConn::Lean(c) => H2cConn::Lean(c.share()),
            H2cConn::Crate(c) => H2cConn::Crate(c.share()),
        })
    }
}

impl Target for Http2Target {
    async fn send(&self, conn: &mut H2cConn) -> Result<Reply, RequestError> {
        match conn {
            H2cConn::Lean(c) => {
                let (block, body) = self.request.next();
                c.request(&block, body).await
            }
            H2cConn::Crate(c) => {
                let r = self
                    .crate_request
                    .as_deref()
                    .expect("the h2 crate's client");
                // The h2 crate's exchange is a large future: boxed, so the
                // lean client's (sent without an allocation) sizes the
                // caller's.
                Box::pin(c.request(Self::crate_request(r)?)).await
            }
        }
    }

    /// The lean client tells; the h2 crate's does not.
    fn first_byte(&self, conn: &H2cConn) -> Option<std::time::Instant> {
        match conn {
            H2cConn::Lean(c) => c.first_byte(),
            H2cConn::Crate(_) => None,
        }
    }
}
