//! The service's MySQL (or MariaDB): the `authors` table created and
//! seeded once, one prepared lookup per request (`SLEEP` for
//! `--db-delay`).
use super::db::{
    failed, pool_of, resolve, unavailable, Author, DbConfig, AUTHORS, CONNECT_TIMEOUT,
};
use crate::response::Resp;
use mysql_async::prelude::Queryable;
use poolbench_pool::Strategy;
use poolbench_targets::mysql::{classify, MysqlTarget};
use poolbench_targets::{RequestError, Target};

/// The pool of MySQL connections and the lookup they prepare.
pub(super) struct MysqlAuthors {
    pub(super) pool: Strategy<MysqlTarget>,
    query: String,
}

/// 0..9, four times crossed: 10,000 rows on any MySQL or MariaDB (a
/// recursive CTE would stop at MySQL's `cte_max_recursion_depth`, 1000).
const DIGITS: &str = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 \
     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 \
     UNION ALL SELECT 8 UNION ALL SELECT 9)";

fn seed() -> String {
    format!(
        "DO GET_LOCK('poolbench-authors', 60);
         CREATE TABLE IF NOT EXISTS authors (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, bio VARCHAR(64) NOT NULL);
         INSERT IGNORE INTO authors (id, name, bio)
           SELECT n, CONCAT('Author ', n), MD5(n) FROM (
             SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS n
             FROM {DIGITS} a, {DIGITS} b, {DIGITS} c, {DIGITS} e) g
           WHERE n <= {AUTHORS};
         DO RELEASE_LOCK('poolbench-authors');"
    )
}

impl MysqlAuthors {
    /// Connect, create and seed the table, and build the pool.
    pub(super) async fn open(config: &DbConfig) -> Result<MysqlAuthors, String> {
        let addr = resolve(&config.url, 3306)?;
        let query = if config.delay.is_zero() {
            "SELECT id, name, bio FROM authors WHERE id = ?".to_string()
        } else {
            // The derived table is run once per query, whatever the id.
            format!(
                "SELECT a.id, a.name, a.bio FROM authors a, (SELECT SLEEP({}) AS s) d WHERE a.id = ?",
                config.delay.as_secs_f64()
            )
        };
        let why = |e: RequestError| format!("MySQL at {addr}: {}", e.message);
        let seed = seed();
        // The id is bound per request; the one --param value only makes
        // the count match the query's single `?` at connect.
        let target = MysqlTarget::new(
            &config.url,
            addr,
            &query,
            &["1".to_string()],
            None,
            Some(&seed),
            CONNECT_TIMEOUT,
        )?;
        target.prepare().await.map_err(why)?;
        Ok(MysqlAuthors {
            pool: pool_of(config, target, why).await?,
            query,
        })
    }

    pub(super) async fn read(&self, id: i32, nested: bool) -> Result<Option<Author>, Resp> {
        let mut conn = self.pool.acquire().await.map_err(unavailable)?;
        let row = conn
            .conn()
            .exec_first::<Author, _, _>(self.query.as_str(), (id,))
            .await
            .map_err(|e| failed(&mut conn, classify(&e)))?;
        if nested {
            // The handler pattern that starves a small pool: holding one
            // connection, ask the same pool for another.
            let mut second = self.pool.acquire().await.map_err(unavailable)?;
            second
                .conn()
                .exec_drop(self.query.as_str(), (id,))
                .await
                .map_err(|e| failed(&mut second, classify(&e)))?;
        }
        Ok(row)
    }
}
