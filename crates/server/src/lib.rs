//! The built-in poolbench target server.
//!
//! HTTP/1.1 and h2c (HTTP/2 with prior knowledge) on one port; optionally
//! TLS (a self-signed certificate generated at start, ALPN h2 or http/1.1)
//! and the gRPC `helloworld.Greeter` on listeners of their own. Any path
//! answers a small `text/plain` body; knobs add a response delay, CPU work, a
//! server-side in-flight limit, a keep-alive idle timeout, a per-connection
//! request limit and injected 500s. `GET /_poolbench/stats` returns the
//! [`CounterValues`] as JSON and `POST /_poolbench/stats/reset` resets it;
//! those requests are not counted.
//!
//! Use [`serve`] on your own runtime, or [`EmbeddedServer`] for a server on
//! its own runtime threads.
//!
//! How the crates meet: the map in `poolbench_model`'s documentation.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod admin;
mod authors;
mod config;
mod counters;
mod delay;
mod embedded;
mod error;
mod grpc;
mod response;
mod serve;
mod service;
mod shared;
mod tls;
mod watch;

pub use authors::{Authors, DbConfig, AUTHORS};
pub use config::{ServerConfig, MAX_BODY_SIZE};
pub use counters::{CounterValues, Counters};
pub use delay::DelaySpec;
pub use embedded::EmbeddedServer;
pub use error::ConfigError;
pub use serve::{serve, serve_all, serve_service, BoundAddrs, Listeners};
pub use watch::{Watch, SAMPLE_EVERY};
