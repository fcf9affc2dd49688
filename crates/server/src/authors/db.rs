//! What both databases of the service mode share: the table's size, the
//! database settings, the pool built over either target, and the answers
//! a failed checkout or query gives.
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Response, StatusCode};
use http_body_util::Full;
use poolbench_pool::{AcquireError, PoolConfig, PoolSpec};
use poolbench_targets::RequestError;
use serde::{Deserialize, Serialize};

use crate::response::{Resp, TEXT_PLAIN};

/// Rows the `authors` table is seeded with.
pub const AUTHORS: i32 = 10_000;

/// How long the service waits for a database or cache connection to open.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How the service reaches its database and cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbConfig {
    /// `postgres://user:password@host:port/db` or `mysql://…`
    /// (`mariadb://…`).
    pub url: String,
    /// Connections the pool keeps (`pool:N`).
    pub pool: usize,
    /// Extra connections opened under load (`elastic:N+M`), closed when idle.
    pub overflow: usize,
    /// Longest wait for a connection before the request fails with 503.
    #[serde(with = "poolbench_model::duration::text")]
    pub timeout: Duration,
    /// Extra time each query takes on the database side (`pg_sleep`,
    /// MySQL's `SLEEP`).
    #[serde(with = "poolbench_model::duration::text")]
    pub delay: Duration,
    /// `redis://` read-through cache.
    pub cache: Option<String>,
    /// The handler takes a second connection while holding the first.
    pub nested: bool,
}

/// One row of `authors`.
pub(super) type Author = (i32, String, String);

pub(super) fn resolve(url: &str, default_port: u16) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host_port = rest.split(['/', '?']).next().unwrap_or("");
    let host_port = host_port
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(host_port);
    let with_port = if host_port.contains(':') {
        host_port.to_string()
    } else {
        format!("{host_port}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve \"{with_port}\": {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve \"{with_port}\""))
}

pub(super) fn unavailable(e: AcquireError<RequestError>) -> Resp {
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("database pool: {e}\n"),
    )
}

/// A query that failed: its connection closed if the error broke it.
pub(super) fn failed<C: poolbench_pool::Connector>(
    conn: &mut poolbench_pool::Lease<C>,
    e: RequestError,
) -> Resp {
    if e.broken {
        conn.mark_broken();
    }
    text(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("database: {}\n", e.message),
    )
}

/// The pool of `config` over `target`, its first connection opened (which
/// proves the query prepares); `why` words a connect error.
pub(super) async fn pool_of<C: poolbench_pool::Connector<Error = RequestError> + Clone>(
    config: &DbConfig,
    target: C,
    why: impl Fn(RequestError) -> String,
) -> Result<poolbench_pool::Strategy<C>, String> {
    let spec: PoolSpec = if config.overflow > 0 {
        format!("elastic:{}+{}", config.pool, config.overflow)
    } else {
        format!("pool:{}", config.pool)
    }
    .parse()
    .map_err(|e| format!("database pool: {e}"))?;
    let pool_config = PoolConfig {
        checkout_timeout: config.timeout,
        ..PoolConfig::default()
    };
    let pool =
        poolbench_pool::Strategy::new(&spec, target, pool_config).map_err(|e| e.to_string())?;
    drop(pool.acquire().await.map_err(|e| match e {
        AcquireError::Connect(e) => why(e),
        e => e.to_string(),
    })?);
    Ok(pool)
}

pub(super) fn text(status: StatusCode, body: String) -> Resp {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, TEXT_PLAIN);
    resp
}
