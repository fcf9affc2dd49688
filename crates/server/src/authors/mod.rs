//! Service mode: `GET /authors/{id}` backed by PostgreSQL or MySQL
//! (`pg.rs`, `mysql.rs`) through this project's pool, with an optional
//! Redis read-through cache and an optional nested checkout (the handler
//! holds one connection while taking another).
//!
//! This is the classic web-service pool exhaustion, reproducible: a pool of
//! 5 with `--nested` under 50 concurrent requests deadlocks until the
//! checkout timeout, and the stats endpoint shows why.
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Response, StatusCode};
use http_body_util::Full;
use poolbench_pool::{AcquireError, MetricsSnapshot, PoolConfig, StrategySpec};
use poolbench_targets::redis::{RedisConn, RedisTarget};
use poolbench_targets::RequestError;
use serde::{Deserialize, Serialize};

use crate::response::{Resp, TEXT_PLAIN};

mod mysql;
mod pg;

/// Rows the `authors` table is seeded with.
pub const AUTHORS: i32 = 10_000;
/// The path prefix served.
pub const PREFIX: &str = "/authors/";
/// How long the service waits for a database or cache connection to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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

/// The database pool's counters, as the stats endpoint reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbPoolStats {
    /// Connections the pool keeps.
    pub size: u64,
    /// Overflow connections allowed above `size`.
    pub overflow: u64,
    /// Connections each request holds at once (2 with `--nested`).
    pub per_request: u64,
    /// Leases handed out.
    pub checkouts: u64,
    /// Checkouts that waited for a connection.
    pub waits: u64,
    /// Checkouts that gave up at the checkout timeout.
    pub timeouts: u64,
    /// Checkouts that waited while their request already held a connection.
    pub nested_waits: u64,
    /// Most connections leased at once (since start).
    pub peak_in_use: u64,
    /// Most requests handled at once (since start or the last reset).
    pub peak_requests: u64,
    /// Connections open now.
    pub open: u64,
    /// Requests answered from the cache.
    pub cache_hits: u64,
    /// Requests the cache could not answer.
    pub cache_misses: u64,
}

/// The database behind the service, through this project's pool.
enum Db {
    Postgres(pg::PgAuthors),
    Mysql(mysql::MysqlAuthors),
}

impl Db {
    fn metrics(&self) -> MetricsSnapshot {
        match self {
            Db::Postgres(d) => d.pool.metrics(),
            Db::Mysql(d) => d.pool.metrics(),
        }
    }

    /// The author's id, name and bio (`None`: no such author); an error
    /// as the answer to send.
    async fn read(&self, id: i32, nested: bool) -> Result<Option<Author>, Resp> {
        match self {
            Db::Postgres(d) => d.read(id, nested).await,
            Db::Mysql(d) => d.read(id, nested).await,
        }
    }
}

/// One row of `authors`.
type Author = (i32, String, String);

/// The service: its pool, its cache and its counters.
pub struct Authors {
    db: Db,
    cache: Option<Cache>,
    config: DbConfig,
    baseline: parking_lot::Mutex<MetricsSnapshot>,
    hits: AtomicU64,
    misses: AtomicU64,
    inflight: AtomicU64,
    peak_requests: AtomicU64,
}

fn resolve(url: &str, default_port: u16) -> Result<SocketAddr, String> {
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

impl Authors {
    /// Connect, create and seed the table, and build the pool. Fails with a
    /// one-line cause (wrong password, no such database, Redis down).
    pub async fn open(config: DbConfig) -> Result<Authors, String> {
        let mysql = config.url.starts_with("mysql://") || config.url.starts_with("mariadb://");
        let db = match mysql {
            true => Db::Mysql(mysql::MysqlAuthors::open(&config).await?),
            false => Db::Postgres(pg::PgAuthors::open(&config).await?),
        };
        let connect_timeout = CONNECT_TIMEOUT;
        let cache = match &config.cache {
            Some(url) => {
                let addr = resolve(url, 6379)?;
                let t = RedisTarget::new(url, addr, "PING", connect_timeout)?;
                let mut conn = poolbench_pool::Connector::connect(&t)
                    .await
                    .map_err(|e| format!("Redis at {addr}: {}", e.message))?;
                poolbench_targets::Target::send(&t, &mut conn)
                    .await
                    .map_err(|e| format!("Redis at {addr}: {}", e.message))?;
                Some(Cache {
                    target: t,
                    conn: parking_lot::Mutex::new(conn),
                })
            }
            None => None,
        };
        let baseline = parking_lot::Mutex::new(db.metrics());
        Ok(Authors {
            db,
            cache,
            config,
            baseline,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            inflight: AtomicU64::new(0),
            peak_requests: AtomicU64::new(0),
        })
    }

    /// The database's name, for people: PostgreSQL or MySQL.
    pub fn database(&self) -> &'static str {
        match self.db {
            Db::Postgres(_) => "PostgreSQL",
            Db::Mysql(_) => "MySQL",
        }
    }

    /// The pool's counters since start or the last reset.
    pub fn stats(&self) -> DbPoolStats {
        let m = self.db.metrics();
        let b = self.baseline.lock();
        DbPoolStats {
            size: self.config.pool as u64,
            overflow: self.config.overflow as u64,
            per_request: if self.config.nested { 2 } else { 1 },
            checkouts: m.checkouts - b.checkouts,
            waits: m.waited - b.waited,
            timeouts: m.timeouts - b.timeouts,
            nested_waits: m.nested_waits - b.nested_waits,
            peak_in_use: m.peak_in_use,
            peak_requests: self.peak_requests.load(Relaxed),
            open: m.open,
            cache_hits: self.hits.load(Relaxed),
            cache_misses: self.misses.load(Relaxed),
        }
    }

    /// Zero the counters (peaks restart from now).
    pub fn reset(&self) {
        *self.baseline.lock() = self.db.metrics();
        self.hits.store(0, Relaxed);
        self.misses.store(0, Relaxed);
        self.peak_requests
            .store(self.inflight.load(Relaxed), Relaxed);
    }

    /// Answer `GET /authors/{id}`.
    pub(crate) async fn get(&self, path: &str) -> Resp {
        let Ok(id) = path[PREFIX.len()..].parse::<i32>() else {
            return text(StatusCode::NOT_FOUND, "no such author\n".into());
        };
        let now = self.inflight.fetch_add(1, Relaxed) + 1;
        self.peak_requests.fetch_max(now, Relaxed);
        let resp = self.lookup(id).await;
        self.inflight.fetch_sub(1, Relaxed);
        resp
    }

    async fn lookup(&self, id: i32) -> Resp {
        let key = format!("author:{id}");
        let mut cache = match &self.cache {
            Some(c) => c.handle().await,
            None => None,
        };
        if let Some(c) = cache.as_mut() {
            let hit: Result<Option<String>, _> = redis::cmd("GET")
                .arg(&key)
                .query_async(c.connection())
                .await;
            match hit {
                Ok(Some(body)) => {
                    self.hits.fetch_add(1, Relaxed);
                    return text(StatusCode::OK, body);
                }
                Err(e) if poolbench_targets::redis::classify(&e).broken => c.mark_broken(),
                _ => {}
            }
            self.misses.fetch_add(1, Relaxed);
        }
        let body = match self.db.read(id, self.config.nested).await {
            Ok(Some((id, name, bio))) => {
                format!("{{\"id\":{id},\"name\":\"{name}\",\"bio\":\"{bio}\"}}\n")
            }
            Ok(None) => return text(StatusCode::NOT_FOUND, "no such author\n".into()),
            Err(resp) => return resp,
        };
        if let Some(c) = cache.as_mut() {
            let _: Result<(), _> = redis::cmd("SET")
                .arg(&key)
                .arg(&body)
                .arg("EX")
                .arg(60)
                .query_async(c.connection())
                .await;
        }
        text(StatusCode::OK, body)
    }
}

/// One multiplexed Redis connection for every request, reopened when it
/// breaks.
struct Cache {
    target: RedisTarget,
    conn: parking_lot::Mutex<RedisConn>,
}

impl Cache {
    async fn handle(&self) -> Option<RedisConn> {
        let conn = self.conn.lock().clone();
        if !poolbench_pool::Connector::is_broken(&self.target, &mut conn.clone()) {
            return Some(conn);
        }
        let fresh = poolbench_pool::Connector::connect(&self.target)
            .await
            .ok()?;
        *self.conn.lock() = fresh.clone();
        Some(fresh)
    }
}

fn unavailable(e: AcquireError<RequestError>) -> Resp {
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("database pool: {e}\n"),
    )
}

/// A query that failed: its connection closed if the error broke it.
fn failed<C: poolbench_pool::Connector>(
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
async fn pool_of<C: poolbench_pool::Connector<Error = RequestError> + Clone>(
    config: &DbConfig,
    target: C,
    why: impl Fn(RequestError) -> String,
) -> Result<poolbench_pool::Strategy<C>, String> {
    let spec: StrategySpec = if config.overflow > 0 {
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

fn text(status: StatusCode, body: String) -> Resp {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, TEXT_PLAIN);
    resp
}
