//! `https://`: TLS (rustls), then HTTP/2 or HTTP/1.1 as ALPN decides
//! (`--http1` / `--http2` offer only one).
use crate::http1::{Http1Conn, Http1Target};
use crate::http2::wire::H2Wire;
use crate::request::{H2Request, HttpRequest};
use crate::source::Sources;
use crate::tls::{self, TlsClient};
use crate::{ErrorKind, Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use poolbench_model::HttpVersion;
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// Opens TLS connections to one address and sends the request.
#[derive(Clone, Debug)]
pub struct HttpsTarget {
    addr: SocketAddr,
    tls: TlsClient,
    version: HttpVersion,
    /// Sends over HTTP/1.1 connections (its address is not used).
    http1: Http1Target,
    /// The request for HTTP/2 connections.
    h2: H2Request,
    connect_timeout: Duration,
    sources: Sources,
}

/// A TLS connection speaking what ALPN chose.
pub enum HttpsConn {
    /// HTTP/1.1 over TLS (boxed: a TLS stream is large, and connections
    /// move in and out of pools on every request).
    Http1(Box<Http1Conn<TlsStream<TcpStream>>>),
    /// HTTP/2 over TLS.
    Http2(H2Wire),
}

impl HttpsTarget {
    /// A target for `spec`, already resolved to `addr`.
    pub fn new(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, TargetError> {
        let request = HttpRequest::for_target(spec, options)?;
        let alpn: &[&[u8]] = match options.http_version {
            HttpVersion::Auto => &[b"h2", b"http/1.1"],
            HttpVersion::Http1 => &[b"http/1.1"],
            HttpVersion::Http2 => &[b"h2"],
        };
        Ok(HttpsTarget {
            addr,
            tls: TlsClient::for_url(spec, options, alpn)?,
            version: options.http_version,
            http1: Http1Target::with_request(&request, addr, connect_timeout),
            h2: H2Request::new(&request, true),
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

impl Connector for HttpsTarget {
    type Conn = HttpsConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<HttpsConn, RequestError> {
        let tcp = crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        let stream = self.tls.handshake_tcp(tcp, self.connect_timeout).await?;
        let h2 = tls::alpn(&stream) == Some(b"h2");
        if !h2 && self.version == HttpVersion::Http2 {
            return Err(RequestError::broken(
                ErrorKind::Protocol,
                "the server did not agree to HTTP/2 by ALPN (--http2)",
            ));
        }
        if h2 {
            crate::http2::handshake(stream, self.connect_timeout)
                .await
                .map(HttpsConn::Http2)
        } else {
            Ok(HttpsConn::Http1(Box::new(Http1Conn::new(stream))))
        }
    }

    fn is_broken(&self, conn: &mut HttpsConn) -> bool {
        match conn {
            HttpsConn::Http1(c) => c.is_broken(),
            HttpsConn::Http2(c) => c.is_broken(),
        }
    }

    fn streams(&self, conn: &HttpsConn) -> usize {
        match conn {
            HttpsConn::Http1(_) => 1,
            HttpsConn::Http2(c) => c.streams(),
        }
    }

    fn advertised_streams(&self, conn: &HttpsConn) -> Option<usize> {
        match conn {
            HttpsConn::Http1(_) => None,
            HttpsConn::Http2(c) => Some(c.streams()),
        }
    }

    fn share(&self, conn: &HttpsConn) -> Option<HttpsConn> {
        match conn {
            HttpsConn::Http1(_) => None,
            HttpsConn::Http2(c) => Some(HttpsConn::Http2(c.share())),
        }
    }
}

impl Target for HttpsTarget {
    async fn send(&self, conn: &mut HttpsConn) -> Result<Reply, RequestError> {
        match conn {
            HttpsConn::Http1(c) => self.http1.exchange(c).await,
            HttpsConn::Http2(c) => {
                let (block, body) = self.h2.next();
                c.request(&block, body).await
            }
        }
    }

    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        Some(self.tls.facts())
    }

    /// One request on a fresh connection when the server asks for a
    /// client certificate and none was given: a refusal (a 4xx, as nginx's
    /// `ssl_verify_client on` answers) stops the run before any load.
    async fn prepare(&self) -> Result<(), RequestError> {
        let mut conn = self.connect().await?;
        if !self.tls.wanted_a_client_cert() {
            return Ok(());
        }
        match self.send(&mut conn).await {
            Ok(reply) if (400..500).contains(&reply.status) => {
                Err(RequestError::protocol(format!(
                    "TLS: the server asks for a client certificate and answered {} without one: \
                 --cert FILE --key FILE",
                    reply.status
                )))
            }
            Err(e) => Err(RequestError::protocol(format!(
                "TLS: the server asks for a client certificate and failed the request without \
                 one ({}): --cert FILE --key FILE",
                e.message
            ))),
            Ok(_) => Ok(()),
        }
    }

    fn first_byte(&self, conn: &HttpsConn) -> Option<Instant> {
        match conn {
            HttpsConn::Http1(c) => c.first_byte(),
            HttpsConn::Http2(c) => c.first_byte(),
        }
    }
}
