//! Server configuration and its validation.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::delay::DelaySpec;
use crate::error::ConfigError;

/// Largest accepted `body_size`: 64 MiB.
pub const MAX_BODY_SIZE: usize = 64 * 1024 * 1024;

/// Behaviour knobs of the built-in target server.
///
/// Durations (de)serialize as humantime strings (`"60s"`, `"1ms"`), the delay
/// as its string form (see [`DelaySpec`]). Missing fields take their defaults.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerConfig {
    /// Address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Response delay, slept (not spun) before answering.
    pub delay: DelaySpec,
    /// CPU work per request: busy-spin this long on the runtime thread.
    #[serde(with = "poolbench_model::duration::text")]
    pub cpu: Duration,
    /// Size of the response body in bytes.
    pub body_size: usize,
    /// Server-side limit of requests processed at once; excess requests wait.
    pub max_inflight: Option<usize>,
    /// An idle keep-alive connection is closed after this long (zero disables).
    #[serde(with = "poolbench_model::duration::text")]
    pub keepalive_timeout: Duration,
    /// After this many requests a connection is closed (`connection: close`
    /// on HTTP/1.1, graceful GOAWAY on HTTP/2).
    pub max_requests_per_conn: Option<u64>,
    /// Fraction of requests answered with a 500.
    pub fail_rate: f64,
    /// The whole server freezes this long at the start of every
    /// `stall_every` period after it starts: no response leaves during a
    /// stall (zero disables).
    #[serde(with = "poolbench_model::duration::text")]
    pub stall: Duration,
    /// The period of stalls.
    #[serde(with = "poolbench_model::duration::text")]
    pub stall_every: Duration,
    /// HTTP/1.1 answers to pipelined requests leave in one write, as some
    /// benchmark servers do (to show why they mislead).
    pub batching: bool,
    /// A second listener speaking TLS (HTTP/1.1 and HTTP/2 by ALPN); it also
    /// answers the gRPC Greeter, for `grpcs://`. `None`: no TLS listener.
    pub tls_listen: Option<SocketAddr>,
    /// PEM certificate chain for the TLS listener; `None` (with `tls_key`
    /// `None`): a self-signed certificate for `localhost` and `127.0.0.1`,
    /// generated at start.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// A listener for the gRPC `helloworld.Greeter` (HTTP/2 prior knowledge; the
    /// stats endpoint there also answers HTTP/1.1),
    /// honouring the same delay, cpu, fail and stall knobs. `None`: no gRPC
    /// listener.
    pub grpc_listen: Option<SocketAddr>,
    /// HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS announced on every listener;
    /// `None`: hyper's default (200).
    pub max_concurrent_streams: Option<u32>,
    /// The HTTP listener speaks only HTTP/1.1 (no h2c), as many servers do.
    pub http1_only: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            delay: DelaySpec::None,
            cpu: Duration::ZERO,
            body_size: 13,
            max_inflight: None,
            keepalive_timeout: Duration::from_secs(60),
            max_requests_per_conn: None,
            fail_rate: 0.0,
            stall: Duration::ZERO,
            stall_every: Duration::from_secs(5),
            batching: false,
            tls_listen: None,
            tls_cert: None,
            tls_key: None,
            grpc_listen: None,
            max_concurrent_streams: None,
            http1_only: false,
        }
    }
}

impl ServerConfig {
    /// Checks every knob; the error names the first one that is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(0.0..=1.0).contains(&self.fail_rate) {
            return Err(ConfigError::FailRate(self.fail_rate));
        }
        if self.body_size > MAX_BODY_SIZE {
            return Err(ConfigError::BodySize(self.body_size));
        }
        if self.max_inflight == Some(0) {
            return Err(ConfigError::MaxInflight);
        }
        if self.max_requests_per_conn == Some(0) {
            return Err(ConfigError::MaxRequestsPerConn);
        }
        if !self.stall.is_zero() && self.stall >= self.stall_every {
            return Err(ConfigError::Stall);
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err(ConfigError::CertKey);
        }
        if self.max_concurrent_streams == Some(0) {
            return Err(ConfigError::MaxConcurrentStreams);
        }
        self.delay.check()
    }
}
