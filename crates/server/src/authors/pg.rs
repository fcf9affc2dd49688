//! The service's PostgreSQL: the `authors` table created and seeded once,
//! one prepared lookup per request (`pg_sleep` for `--db-delay`).
use super::db::{
    failed, pool_of, resolve, unavailable, Author, DbConfig, AUTHORS, CONNECT_TIMEOUT,
};
use crate::response::Resp;
use poolbench_pool::Strategy;
use poolbench_targets::postgres::{classify, PostgresTarget};
use poolbench_targets::RequestError;

/// The pool of PostgreSQL connections.
pub(super) struct PgAuthors {
    pub(super) pool: Strategy<PostgresTarget>,
}

impl PgAuthors {
    /// Connect, create and seed the table, and build the pool.
    pub(super) async fn open(config: &DbConfig) -> Result<PgAuthors, String> {
        let addr = resolve(&config.url, 5432)?;
        let query = if config.delay.is_zero() {
            "SELECT id, name, bio FROM authors WHERE id = $1".to_string()
        } else {
            format!(
                "SELECT a.id, a.name, a.bio FROM authors a, pg_sleep({}) WHERE a.id = $1",
                config.delay.as_secs_f64()
            )
        };
        let target = PostgresTarget::new(&config.url, addr, &query, CONNECT_TIMEOUT)?;
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
        Ok(PgAuthors {
            pool: pool_of(config, target, why).await?,
        })
    }

    pub(super) async fn read(&self, id: i32, nested: bool) -> Result<Option<Author>, Resp> {
        let mut conn = self.pool.acquire().await.map_err(unavailable)?;
        // The target runs in prepared mode: each connection has it.
        let unprepared = || RequestError::protocol("the lookup is not prepared");
        let statement = conn.statement().cloned().ok_or_else(unprepared);
        let statement = statement.map_err(|e| failed(&mut conn, e))?;
        let row = conn
            .client()
            .query_opt(&statement, &[&id])
            .await
            .map_err(|e| failed(&mut conn, classify(&e)))?;
        if nested {
            // The handler pattern that starves a small pool: holding one
            // connection, ask the same pool for another.
            let mut second = self.pool.acquire().await.map_err(unavailable)?;
            let own = second.statement().cloned().ok_or_else(unprepared);
            let own = own.map_err(|e| failed(&mut second, e))?;
            second
                .client()
                .query_opt(&own, &[&id])
                .await
                .map_err(|e| failed(&mut second, classify(&e)))?;
        }
        Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
    }
}
