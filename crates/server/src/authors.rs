//! Service mode: `GET /authors/{id}` backed by PostgreSQL through this
//! project's pool, with an optional Redis read-through cache and an optional
//! nested checkout (the handler holds one connection while taking another).
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
use poolbench_pool::{AcquireError, MetricsSnapshot, PoolConfig, Strategy, StrategySpec};
use poolbench_targets::postgres::{classify, PostgresTarget};
use poolbench_targets::redis::{RedisConn, RedisTarget};
use poolbench_targets::RequestError;
use serde::{Deserialize, Serialize};

use crate::response::{Resp, TEXT_PLAIN};

/// Rows the `authors` table is seeded with.
pub const AUTHORS: i32 = 10_000;
/// The path prefix served.
pub const PREFIX: &str = "/authors/";

/// How the service reaches its database and cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbConfig {
    /// `postgres://user:password@host:port/db`.
    pub url: String,
    /// Connections the pool keeps (`pool:N`).
    pub pool: usize,
    /// Extra connections opened under load (`elastic:N+M`), closed when idle.
    pub overflow: usize,
    /// Longest wait for a connection before the request fails with 503.
    #[serde(with = "poolbench_model::duration::text")]
    pub timeout: Duration,
    /// Extra time each query takes on the database side (`pg_sleep`).
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

/// The service: its pool, its cache and its counters.
pub struct Authors {
    pool: Strategy<PostgresTarget>,
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
        let addr = resolve(&config.url, 5432)?;
        let query = if config.delay.is_zero() {
            "SELECT id, name, bio FROM authors WHERE id = $1".to_string()
        } else {
            format!(
                "SELECT a.id, a.name, a.bio FROM authors a, pg_sleep({}) WHERE a.id = $1",
                config.delay.as_secs_f64()
            )
        };
        let connect_timeout = Duration::from_secs(5);
        let target = PostgresTarget::new(&config.url, addr, &query, connect_timeout)?;
        let why = |e: RequestError| format!("PostgreSQL at {addr}: {}", e.message);
        // One service at a time creates the table: concurrent CREATE TABLE
        // IF NOT EXISTS of the same name can collide in the catalog.
        target
            .setup(&format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock(7041976);
                 CREATE TABLE IF NOT EXISTS authors (id integer PRIMARY KEY, name text NOT NULL, bio text NOT NULL);
                 INSERT INTO authors (id, name, bio)
                   SELECT g, 'Author ' || g, md5(g::text) FROM generate_series(1, {AUTHORS}) g
                   ON CONFLICT (id) DO NOTHING;
                 COMMIT;"
            ))
            .await
            .map_err(why)?;
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
        let pool = Strategy::new(&spec, target, pool_config).map_err(|e| e.to_string())?;
        // The first connection proves the query prepares.
        drop(pool.acquire().await.map_err(|e| match e {
            AcquireError::Connect(e) => why(e),
            e => e.to_string(),
        })?);
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
        let baseline = parking_lot::Mutex::new(pool.metrics());
        Ok(Authors {
            pool,
            cache,
            config,
            baseline,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            inflight: AtomicU64::new(0),
            peak_requests: AtomicU64::new(0),
        })
    }

    /// The pool's counters since start or the last reset.
    pub fn stats(&self) -> DbPoolStats {
        let m = self.pool.metrics();
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
        *self.baseline.lock() = self.pool.metrics();
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
        let body = match self.read_db(id).await {
            Ok(Some(body)) => body,
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

    async fn read_db(&self, id: i32) -> Result<Option<String>, Resp> {
        let mut conn = self.pool.acquire().await.map_err(unavailable)?;
        let row = conn
            .client()
            .query_opt(conn.statement(), &[&id])
            .await
            .map_err(|e| failed(&mut conn, &e))?;
        if self.config.nested {
            // The handler pattern that starves a small pool: holding one
            // connection, ask the same pool for another.
            let mut second = self.pool.acquire().await.map_err(unavailable)?;
            second
                .client()
                .query_opt(second.statement(), &[&id])
                .await
                .map_err(|e| failed(&mut second, &e))?;
        }
        Ok(row.map(|r| {
            let (id, name, bio): (i32, String, String) = (r.get(0), r.get(1), r.get(2));
            format!("{{\"id\":{id},\"name\":\"{name}\",\"bio\":\"{bio}\"}}\n")
        }))
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

fn failed(conn: &mut poolbench_pool::Lease<PostgresTarget>, e: &tokio_postgres::Error) -> Resp {
    let e = classify(e);
    if e.broken {
        conn.mark_broken();
    }
    text(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("database: {}\n", e.message),
    )
}

fn text(status: StatusCode, body: String) -> Resp {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, TEXT_PLAIN);
    resp
}
