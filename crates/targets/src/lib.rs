//! Connectors for the protocols poolbench drives: HTTP/1.1 (plain and
//! pipelined), HTTP/2 (h2c, and over TLS), gRPC, PostgreSQL, MySQL/MariaDB
//! and Redis, each in a module of its own.
//!
//! A [`Target`] is a `poolbench_pool::Connector` (how to open a connection
//! and tell a broken one) that also sends one request over a connection and
//! classifies what went wrong ([`RequestError`], [`ErrorKind`], a status or
//! SQLSTATE). The pool never sees the protocol; the engine never sees the
//! pool's insides. [`AnyTarget`] picks the connector from the URL's scheme
//! ([`parse_target`]); [`Sources`] binds outgoing connections to source
//! addresses; the request's options (headers, body, query, parameters,
//! command) come from `poolbench_model::TargetOptions`.
#![forbid(unsafe_code)]

pub mod any;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod grpc;
pub mod http1;
pub mod http2;
pub mod https;
mod idle;
pub mod library;
pub mod mysql;
mod net;
pub mod postgres;
pub mod redis;
mod request;
mod source;
mod sql_params;
pub mod survey;
mod target;
mod template;
mod tls;

pub use any::{AnyConn, AnyTarget};
pub use error::{ErrorKind, RequestError, SqlState};
pub use http1::pipeline;
pub use http2::wire::H2Wire;
pub use poolbench_model::{
    GrpcOptions, HttpRequestOptions, HttpVersion, TargetOptions, TargetSpec,
};
pub use source::Sources;
pub use target::{parse_target, resolve, TargetError};

use library::ClientPool;
use poolbench_model::StrategySpec;
use poolbench_pool::{Connector, PoolConfig};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// What came back from one successful exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Protocol status (HTTP status code).
    pub status: u16,
    /// Body bytes received.
    pub bytes: u64,
}

/// A connector that can also send one request over a connection it opened.
pub trait Target: Connector<Error = RequestError> {
    /// Work done once before any load (e.g. a setup statement); an error
    /// here stops the run before it starts.
    fn prepare(&self) -> impl Future<Output = Result<(), RequestError>> + Send {
        async { Ok(()) }
    }

    /// True when a connection leased to one task at a time
    /// ([`Connector::connect_exclusive`]) is driven by that task alone
    /// (no background task of its own) and either moves to the I/O driver
    /// of whichever thread uses it or, used from another, still works
    /// through the driver of the thread that opened it, so the engine may
    /// spread its workers over load threads with a driver each.
    fn follows_holder(&self) -> bool {
        false
    }

    /// Send one request and read the whole answer.
    fn send(
        &self,
        conn: &mut Self::Conn,
    ) -> impl Future<Output = Result<Reply, RequestError>> + Send;

    /// When the answer to the last request [`Target::send`] sent over
    /// `conn` began to arrive (the first read that returned bytes), where
    /// the protocol tells; `None` where it cannot.
    fn first_byte(&self, conn: &Self::Conn) -> Option<Instant> {
        let _ = conn;
        None
    }

    /// How long the last request [`Target::send`] sent over `conn` waited
    /// behind an earlier answer on the same connection (pipelining: from
    /// its write until the answer before it was whole); `None` where
    /// requests do not queue on a connection.
    fn behind(&self, conn: &Self::Conn) -> Option<std::time::Duration> {
        let _ = conn;
        None
    }

    /// The client's TLS handshakes since the target was opened (counted as
    /// connections open), for a target speaking TLS; `None` otherwise.
    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        None
    }

    /// The protocol client's own pool that the library strategy `spec`
    /// names (`mysql-async:N`), where this target has it; `None` (the
    /// default) otherwise.
    fn client_pool(
        &self,
        spec: &StrategySpec,
        config: &PoolConfig,
    ) -> Option<Arc<dyn ClientPool<Self::Conn>>> {
        let _ = (spec, config);
        None
    }
}
