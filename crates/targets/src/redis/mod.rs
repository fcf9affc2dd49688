//! `redis://` under load: exclusive pools get sessions their holder drives
//! alone (`wire`: one write and one read per command, as
//! redis-benchmark), over plain TCP in RESP2; the slot strategies, and TLS
//! or RESP3 sessions, get the redis crate's multiplexed connection
//! (`client`), which pipelines the commands of several holders over one
//! connection through its driver task.
mod client;
mod dial;
mod errors;
mod idle_settings;
pub(crate) mod limits;
pub(crate) mod resp;
mod wire;

use crate::source::Sources;
use crate::{Reply, RequestError, Target};
use bytes::Bytes;
pub use client::{parse_command, RedisConn, RedisTarget, PIPELINE_DEPTH};
pub use errors::classify;
use poolbench_pool::Connector;
pub use wire::RespWire;
use wire::SessionSetup;

/// Opens Redis connections of either kind and sends one command per
/// request.
#[derive(Clone, Debug)]
pub struct RedisLoad {
    pipelined: RedisTarget,
    /// How sessions start, when they can serve the target.
    wire: Option<SessionSetup>,
    /// The sessions' request, encoded once when the command is fixed.
    request: Option<Bytes>,
}

/// A Redis connection of either kind.
pub enum RedisConnection {
    /// The redis crate's multiplexed connection (or a handle to one).
    Pipelined(RedisConn),
    /// A session driven by its holder (boxed: it keeps its read buffer).
    Wire(Box<RespWire>),
}

impl RedisLoad {
    /// The load target over `pipelined`'s server and command.
    pub fn new(pipelined: RedisTarget) -> RedisLoad {
        RedisLoad {
            wire: pipelined.wire_settings(),
            request: pipelined.fixed_request(),
            pipelined,
        }
    }

    /// The command sent with each request, as given.
    pub fn command(&self) -> &str {
        self.pipelined.command()
    }

    /// Connections bound to `sources` in turn (`--source`).
    pub fn with_sources(self, sources: Sources) -> RedisLoad {
        RedisLoad::new(self.pipelined.with_sources(sources))
    }

    /// Sessions driven by their holder serve the exclusive strategies.
    pub fn has_sessions(&self) -> bool {
        self.wire.is_some()
    }
}

impl Connector for RedisLoad {
    type Conn = RedisConnection;
    type Error = RequestError;

    async fn connect(&self) -> Result<RedisConnection, RequestError> {
        self.pipelined
            .connect()
            .await
            .map(RedisConnection::Pipelined)
    }

    async fn connect_exclusive(&self) -> Result<RedisConnection, RequestError> {
        match &self.wire {
            Some(settings) => RespWire::open(settings)
                .await
                .map(|w| RedisConnection::Wire(Box::new(w))),
            None => self.connect().await,
        }
    }

    fn is_broken(&self, conn: &mut RedisConnection) -> bool {
        match conn {
            RedisConnection::Pipelined(c) => self.pipelined.is_broken(c),
            RedisConnection::Wire(w) => w.is_broken(),
        }
    }

    fn streams(&self, conn: &RedisConnection) -> usize {
        match conn {
            RedisConnection::Pipelined(c) => self.pipelined.streams(c),
            RedisConnection::Wire(_) => 1,
        }
    }

    fn share(&self, conn: &RedisConnection) -> Option<RedisConnection> {
        match conn {
            RedisConnection::Pipelined(c) => {
                self.pipelined.share(c).map(RedisConnection::Pipelined)
            }
            RedisConnection::Wire(_) => None,
        }
    }
}

impl Target for RedisLoad {
    /// Sessions (`wire`) follow their holder; the crate's multiplexed
    /// connections, handed only to the slot strategies, keep their driver
    /// task.
    fn follows_holder(&self) -> bool {
        self.has_sessions()
    }

    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        self.pipelined.tls_facts()
    }

    async fn send(&self, conn: &mut RedisConnection) -> Result<Reply, RequestError> {
        match conn {
            RedisConnection::Pipelined(c) => self.pipelined.send(c).await,
            RedisConnection::Wire(w) => match &self.request {
                Some(request) => w.exchange(request).await,
                None => {
                    let mut request = Vec::new();
                    self.pipelined.render_request(&mut request);
                    w.exchange(&request).await
                }
            },
        }
    }
}
