//! HTTP/1.1 keep-alive connections: `GET path` encoded once, sent and read
//! by the task that holds the connection (see [`crate::h1wire`]).
use crate::h1wire::Wire;
use crate::{Reply, RequestError, Target, TargetSpec};
use bytes::Bytes;
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;

pub use crate::h1wire::Http1Conn;

/// Opens HTTP/1.1 connections to one address and sends `GET path`.
#[derive(Clone, Debug)]
pub struct Http1Target {
    addr: SocketAddr,
    /// The whole request, encoded once.
    request: Bytes,
    connect_timeout: Duration,
}

impl Http1Target {
    /// A target for `spec`, already resolved to `addr`.
    pub fn new(spec: &TargetSpec, addr: SocketAddr, connect_timeout: Duration) -> Self {
        let request = format!(
            "GET {} HTTP/1.1\r\nhost: {}\r\n\r\n",
            spec.path, spec.authority
        );
        Http1Target {
            addr,
            request: Bytes::from(request),
            connect_timeout,
        }
    }

    /// Send the request over any HTTP/1.1 connection (TCP or TLS).
    pub(crate) async fn exchange<I: Wire>(
        &self,
        conn: &mut Http1Conn<I>,
    ) -> Result<Reply, RequestError> {
        conn.exchange(&self.request).await
    }
}

impl Connector for Http1Target {
    type Conn = Http1Conn;
    type Error = RequestError;

    async fn connect(&self) -> Result<Http1Conn, RequestError> {
        let stream = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
        Ok(Http1Conn::new(stream))
    }

    fn is_broken(&self, conn: &mut Http1Conn) -> bool {
        conn.is_broken()
    }
}

impl Target for Http1Target {
    async fn send(&self, conn: &mut Http1Conn) -> Result<Reply, RequestError> {
        self.exchange(conn).await
    }
}
