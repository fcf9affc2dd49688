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
//! use poolbench_pool::{Connector, PoolConfig, Strategy, StrategySpec};
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
//! let spec: StrategySpec = "pool:4".parse().unwrap();
//! let pool = Strategy::new(&spec, Numbers, PoolConfig::default()).unwrap();
//! let conn = pool.acquire().await.unwrap();
//! assert_eq!(*conn, 7);
//! drop(conn); // back to the pool
//! assert_eq!(pool.metrics().opened, 1);
//! # });
//! ```
#![forbid(unsafe_code)]

mod clock;
mod config;
mod error;
mod exclusive;
mod holders;
mod lease;
mod metrics;
mod slots;
mod spec;
mod strategy;
mod tracked;
mod wait;

pub use config::PoolConfig;
pub use error::{AcquireError, BuildError, SpecError};
pub use lease::Lease;
pub use metrics::MetricsSnapshot;
pub use spec::StrategySpec;
pub use strategy::Strategy;
pub use wait::WaitStats;

use std::future::Future;

/// Opens connections of one kind. Knows nothing of what is sent over them.
pub trait Connector: Send + Sync + 'static {
    /// An open connection.
    type Conn: Send + 'static;
    /// Why a connection could not be opened.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Open a new connection.
    fn connect(&self) -> impl Future<Output = Result<Self::Conn, Self::Error>> + Send;

    /// A cheap check, without I/O, that the connection can no longer be used
    /// (closed by the peer, failed). Broken connections are discarded.
    fn is_broken(&self, conn: &mut Self::Conn) -> bool;
}
