//! Redis over the `redis` crate's multiplexed connection: one command per
//! request (`PING` unless told otherwise).
//!
//! The multiplexed connection pipelines: several callers may send on one
//! connection at once, so `shared` and the other slot strategies multiplex it.
use crate::{ErrorKind, Reply, RequestError, Target};
use poolbench_pool::Connector;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Cmd, ConnectionAddr, IntoConnectionInfo, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Requests one connection carries at once when shared.
pub const PIPELINE_DEPTH: usize = 1024;

/// Opens connections to one Redis server and sends one command per request.
#[derive(Clone)]
pub struct RedisTarget {
    client: Client,
    command: Arc<Cmd>,
    text: Arc<str>,
    connect_timeout: Duration,
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTarget")
            .field("command", &self.text)
            .finish_non_exhaustive()
    }
}

/// One Redis connection (a handle to it: handles share the socket).
#[derive(Clone)]
pub struct RedisConn {
    conn: MultiplexedConnection,
    broken: Arc<AtomicBool>,
}

impl RedisConn {
    /// The connection, for callers that send other commands.
    pub fn connection(&mut self) -> &mut MultiplexedConnection {
        &mut self.conn
    }

    /// Never hand this connection (or its other handles) out again.
    pub fn mark_broken(&self) {
        self.broken.store(true, Relaxed);
    }
}

/// Split `GET key` into a command and its arguments.
pub fn parse_command(text: &str) -> Result<Cmd, String> {
    let mut words = text.split_whitespace();
    let name = words
        .next()
        .ok_or_else(|| "empty Redis command".to_string())?;
    let mut cmd = redis::cmd(name);
    for w in words {
        cmd.arg(w);
    }
    Ok(cmd)
}

impl RedisTarget {
    /// A target for the `redis://` URL `url`, resolved to `addr`, sending
    /// `command` (e.g. `PING`, `GET key`).
    pub fn new(
        url: &str,
        addr: SocketAddr,
        command: &str,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let mut info = url
            .into_connection_info()
            .map_err(|e| format!("invalid Redis URL \"{url}\": {e}"))?;
        info.addr = ConnectionAddr::Tcp(addr.ip().to_string(), addr.port());
        let client = Client::open(info).map_err(|e| format!("invalid Redis URL \"{url}\": {e}"))?;
        Ok(RedisTarget {
            client,
            command: Arc::new(parse_command(command)?),
            text: command.into(),
            connect_timeout,
        })
    }

    /// The command sent with each request, as given.
    pub fn command(&self) -> &str {
        &self.text
    }
}

impl Connector for RedisTarget {
    type Conn = RedisConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<RedisConn, RequestError> {
        let config = AsyncConnectionConfig::new().set_connection_timeout(self.connect_timeout);
        let connect = self
            .client
            .get_multiplexed_async_connection_with_config(&config);
        // The crate's own timeout covers the TCP connect; this one also
        // covers the handshake (AUTH, SELECT).
        match tokio::time::timeout(self.connect_timeout * 2, connect).await {
            Ok(Ok(conn)) => Ok(RedisConn {
                conn,
                broken: Arc::new(AtomicBool::new(false)),
            }),
            Ok(Err(e)) => Err(classify(&e)),
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                "connect to Redis: timed out",
            )),
        }
    }

    fn is_broken(&self, conn: &mut RedisConn) -> bool {
        conn.broken.load(Relaxed)
    }

    fn streams(&self, _conn: &RedisConn) -> usize {
        PIPELINE_DEPTH
    }

    fn share(&self, conn: &RedisConn) -> Option<RedisConn> {
        Some(conn.clone())
    }
}

impl Target for RedisTarget {
    async fn send(&self, conn: &mut RedisConn) -> Result<Reply, RequestError> {
        match self.command.query_async::<Value>(&mut conn.conn).await {
            Ok(v) => Ok(Reply {
                status: 0,
                bytes: value_bytes(&v),
            }),
            Err(e) => {
                let err = classify(&e);
                if err.broken {
                    conn.broken.store(true, Relaxed);
                }
                Err(err)
            }
        }
    }
}

/// Payload bytes of a reply (strings and their nesting).
fn value_bytes(v: &Value) -> u64 {
    match v {
        Value::BulkString(b) => b.len() as u64,
        Value::SimpleString(s) => s.len() as u64,
        Value::Array(items) | Value::Set(items) => items.iter().map(value_bytes).sum(),
        _ => 0,
    }
}

/// Count a Redis error by kind. An error the server answered with leaves the
/// connection usable.
pub fn classify(e: &redis::RedisError) -> RequestError {
    use redis::ErrorKind as K;
    let (kind, broken) = if e.is_timeout() {
        (ErrorKind::Timeout, true)
    } else if e.is_connection_refusal() {
        (ErrorKind::Refused, true)
    } else if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() {
        (ErrorKind::Reset, true)
    } else {
        match e.kind() {
            K::ParseError | K::TypeError => (ErrorKind::Protocol, false),
            K::AuthenticationFailed | K::InvalidClientConfig => (ErrorKind::Status, true),
            _ => (ErrorKind::Status, false),
        }
    };
    RequestError {
        kind,
        broken,
        unsent: false,
        message: format!("redis: {e}"),
        code: None,
    }
}
