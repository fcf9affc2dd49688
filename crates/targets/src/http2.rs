//! `h2c://`: HTTP/2 with prior knowledge over TCP, on the h2 crate.
use crate::h2conn::H2Conn;
use crate::{Reply, RequestError, Target, TargetSpec};
use http::{Request, Uri};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;

/// Opens h2c connections to one address and sends `GET path`.
#[derive(Clone, Debug)]
pub struct Http2Target {
    addr: SocketAddr,
    uri: Uri,
    connect_timeout: Duration,
}

impl Http2Target {
    /// A target for `spec`, already resolved to `addr`.
    pub fn new(spec: &TargetSpec, addr: SocketAddr, connect_timeout: Duration) -> Self {
        Http2Target {
            addr,
            uri: request_uri("http", spec),
            connect_timeout,
        }
    }
}

/// `scheme://authority/path` of `spec`: HTTP/2 sends all three.
pub(crate) fn request_uri(scheme: &str, spec: &TargetSpec) -> Uri {
    format!("{scheme}://{}{}", spec.authority, spec.path)
        .parse()
        .unwrap_or(Uri::from_static("http://localhost/"))
}

/// `GET uri` without a body.
pub(crate) fn get(uri: &Uri) -> Request<()> {
    let mut req = Request::new(());
    *req.uri_mut() = uri.clone();
    req
}

impl Connector for Http2Target {
    type Conn = H2Conn;
    type Error = RequestError;

    async fn connect(&self) -> Result<H2Conn, RequestError> {
        let stream = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
        match tokio::time::timeout(self.connect_timeout, H2Conn::handshake(stream)).await {
            Ok(conn) => conn,
            Err(_) => Err(RequestError::broken(
                crate::ErrorKind::Timeout,
                "HTTP/2 handshake timed out",
            )),
        }
    }

    fn is_broken(&self, conn: &mut H2Conn) -> bool {
        conn.is_broken()
    }

    fn streams(&self, conn: &H2Conn) -> usize {
        conn.streams()
    }

    fn share(&self, conn: &H2Conn) -> Option<H2Conn> {
        Some(conn.share())
    }
}

impl Target for Http2Target {
    async fn send(&self, conn: &mut H2Conn) -> Result<Reply, RequestError> {
        conn.get(get(&self.uri)).await
    }
}
