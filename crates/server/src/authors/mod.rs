//! Service mode: `GET /authors/{id}` backed by PostgreSQL or MySQL
//! (`pg.rs`, `mysql.rs`) through this project's pool, with an optional
//! Redis read-through cache and an optional nested checkout (the handler
//! holds one connection while taking another).
//!
//! This is the classic web-service pool exhaustion, reproducible: a pool of
//! 5 with `--nested` under 50 concurrent requests deadlocks until the
//! checkout timeout, and the stats endpoint shows why.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use http::StatusCode;
use poolbench_pool::PoolCounters;
use poolbench_targets::redis::{RedisConn, RedisTarget};

use crate::response::Resp;

mod db;
mod mysql;
mod pg;

use db::{resolve, text, Author, CONNECT_TIMEOUT};
pub use db::{DbConfig, AUTHORS};
use poolbench_model::DbPoolCounters;

/// The path prefix served.
pub const PREFIX: &str = "/authors/";

/// The database behind the service, through this project's pool.
enum Db {
    Postgres(pg::PgAuthors),
    Mysql(mysql::MysqlAuthors),
}

impl Db {
    fn metrics(&self) -> PoolCounters {
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

/// The service: its pool, its cache and its counters.
pub struct Authors {
    db: Db,
    cache: Option<Cache>,
    config: DbConfig,
    baseline: parking_lot::Mutex<PoolCounters>,
    hits: AtomicU64,
    misses: AtomicU64,
    inflight: AtomicU64,
    peak_requests: AtomicU64,
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
    pub fn stats(&self) -> DbPoolCounters {
        let m = self.db.metrics();
        let b = self.baseline.lock();
        DbPoolCounters {
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
