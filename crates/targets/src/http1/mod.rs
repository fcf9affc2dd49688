//! HTTP/1.1 keep-alive connections: the request encoded once (or rendered
//! per request from a template, see `crate::request`), sent and read by
//! the task that holds the connection (see `crate::http1::wire`).
mod idle_probe;
pub mod pipeline;
pub(crate) mod pipelined;
pub(crate) mod wire;

use crate::http1::wire::Wire;
use crate::request::{H1Request, HttpRequest};
use crate::source::Sources;
use crate::{Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub use crate::http1::pipelined::H1Pipe;
pub use crate::http1::wire::Http1Conn;

/// Opens HTTP/1.1 connections to one address and sends the request.
#[derive(Clone, Debug)]
pub struct Http1Target {
    addr: SocketAddr,
    request: H1Request,
    connect_timeout: Duration,
    sources: Sources,
    /// `pipeline:NxD`: connections opened for the slot strategies carry D
    /// requests written ahead of their answers.
    depth: Option<usize>,
}

impl Http1Target {
    /// A target for `spec`, already resolved to `addr`, sending the request
    /// `options.http` describes (GET of the URL's path by default).
    pub fn new(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, TargetError> {
        let request = HttpRequest::for_target(spec, options)?;
        Ok(Self::with_request(&request, addr, connect_timeout))
    }

    pub(crate) fn with_request(
        request: &HttpRequest,
        addr: SocketAddr,
        connect_timeout: Duration,
    ) -> Self {
        Http1Target {
            addr,
            request: H1Request::new(request),
            connect_timeout,
            sources: Sources::default(),
            depth: None,
        }
    }

    /// Connections bound to `sources` in turn (`--source`).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
    }

    /// The same target, its connections pipelined `depth` deep.
    pub fn pipelined(&self, depth: usize) -> Self {
        Http1Target {
            depth: Some(depth),
            ..self.clone()
        }
    }

    /// Requests written ahead on each connection, when pipelining.
    pub fn depth(&self) -> Option<usize> {
        self.depth
    }

    /// Open a pipelined connection (see [`H1Pipe`]).
    pub async fn connect_pipelined(&self, depth: usize) -> Result<H1Pipe, RequestError> {
        let stream =
            crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        Ok(H1Pipe::start(stream, depth))
    }

    /// Send the request over a pipelined connection, behind those already
    /// written on it.
    pub async fn send_pipelined(&self, conn: &mut H1Pipe) -> Result<Reply, RequestError> {
        let bytes = self.request.next_bytes();
        conn.exchange(bytes, self.request.bodiless_answer()).await
    }

    /// Send the request over any HTTP/1.1 connection (TCP or TLS).
    pub(crate) async fn exchange<I: Wire>(
        &self,
        conn: &mut Http1Conn<I>,
    ) -> Result<Reply, RequestError> {
        let bytes = self.request.next();
        conn.exchange(&bytes, self.request.bodiless_answer()).await
    }
}

impl Connector for Http1Target {
    type Conn = Http1Conn;
    type Error = RequestError;

    async fn connect(&self) -> Result<Http1Conn, RequestError> {
        let stream =
            crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
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

    fn first_byte(&self, conn: &Http1Conn) -> Option<Instant> {
        conn.first_byte()
    }
}
