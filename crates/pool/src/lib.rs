//! Connection strategies behind one small trait.
//!
//! A [`Connector`] knows how to open a connection and whether one is broken;
//! it knows nothing of the protocol spoken over it. A [`Strategy`] decides how
//! callers share the connections a connector opens: one per request, one for
//! everything, a fixed ring, or a pool with fair FIFO checkout. Every strategy
//! hands out a [`Lease`] that gives the connection back when dropped, so a
//! cancelled caller never loses capacity.
//!
//! ```
//! use poolbench_pool::{Connector, PoolConfig, Strategy, PoolSpec};
//! use std::convert::Infallible;
//!
//! #[derive(Clone)]
//! struct Numbers;
//! impl Connector for Numbers {
//!     type Conn = u32;
//!     type Error = Infallible;
//!     async fn connect(&self) -> Result<u32, Infallible> { Ok(7) }
//!     fn is_broken(&self, _conn: &mut u32) -> bool { false }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let spec: PoolSpec = "pool:4".parse().unwrap();
//! let pool = Strategy::new(&spec, Numbers, PoolConfig::default()).unwrap();
//! let conn = pool.acquire().await.unwrap();
//! assert_eq!(*conn, 7);
//! drop(conn); // back to the pool
//! assert_eq!(pool.metrics().opened, 1);
//! # });
//! ```
//!
//! How the crates meet: the map in `poolbench_model`'s documentation.
#![forbid(unsafe_code)]

mod clock;
mod error;
mod exclusive;
mod handoff;
mod holders;
mod lease;
mod metrics;
mod slots;
mod strategy;
mod tracked;
mod wait;

pub use error::{AcquireError, BuildError};
pub use lease::Lease;
pub use poolbench_pool_types::{PoolConfig, PoolCounters, PoolSpec, SpecError, WaitStats};
pub use strategy::Strategy;

/// What [`Connector::streams`] returns for a connection whose peer set no
/// limit on the requests it carries at once.
pub const UNLIMITED_STREAMS: usize = 1 << 30;

use std::future::Future;

/// Opens connections of one kind. Knows nothing of what is sent over them.
pub trait Connector: Send + Sync + 'static {
    /// An open connection.
    type Conn: Send + 'static;
    /// Why a connection could not be opened.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Open a new connection.
    fn connect(&self) -> impl Future<Output = Result<Self::Conn, Self::Error>> + Send;

    /// Open a connection that will be leased to one holder at a time (the
    /// exclusive pools ask for these; the slot strategies, which may share a
    /// connection, call [`connect`](Self::connect)). A protocol whose
    /// connections multiplex may open a cheaper kind here, driven by its
    /// holder alone. The default is [`connect`](Self::connect).
    fn connect_exclusive(&self) -> impl Future<Output = Result<Self::Conn, Self::Error>> + Send {
        self.connect()
    }

    /// A cheap check, without I/O, that the connection can no longer be used
    /// (closed by the peer, failed). Broken connections are discarded.
    fn is_broken(&self, conn: &mut Self::Conn) -> bool;

    /// How many requests the connection carries at once: 1 for a protocol
    /// that answers one request at a time, more for one that multiplexes or
    /// pipelines (HTTP/2: the peer's max concurrent streams, or
    /// [`UNLIMITED_STREAMS`] if it set none). Asked each time a slot
    /// strategy hands the connection out, so it may change.
    fn streams(&self, _conn: &Self::Conn) -> usize {
        1
    }

    /// The streams the peer itself allows on this connection, for a
    /// protocol whose servers set such a limit (HTTP/2:
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`, [`UNLIMITED_STREAMS`] if it set
    /// none); `None` (the default) where the protocol has no such setting
    /// (a pipeline depth is the client's choice, not the server's). Kept in
    /// the strategy's metrics.
    fn advertised_streams(&self, _conn: &Self::Conn) -> Option<usize> {
        None
    }

    /// A second handle to the same connection, for a protocol whose
    /// connections take concurrent requests; `None` (the default) when a
    /// connection serves one caller at a time. With a handle and
    /// [`streams`](Self::streams) above 1, `shared`, `round-robin:N` and
    /// `least-loaded:N` let that many leases use one connection at once.
    fn share(&self, _conn: &Self::Conn) -> Option<Self::Conn> {
        None
    }

    /// The same connector, opening connections that carry up to `depth`
    /// requests written ahead of their answers, answered in order
    /// (`pipeline:NxD`): its [`streams`](Self::streams) are then `depth`
    /// and [`share`](Self::share) hands out handles. `None` (the default)
    /// for a protocol that does not pipeline.
    fn pipelined(&self, _depth: usize) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}
