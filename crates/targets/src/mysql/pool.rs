//! `mysql-async:N`: the MySQL client's own pool (`mysql_async::Pool`) as a
//! baseline strategy, N connections at least and at most
//! (`PoolConstraints::new(N, N)`). Its connections go back to it when
//! dropped. Resetting each connection on its return
//! (`COM_RESET_CONNECTION`, the library's default) is off, so that a
//! request does the same work as under every other strategy.
use super::conn::MysqlConn;
use super::errors;
use crate::library::{Checkout, ClientPool, ClientPoolCounts};
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use poolbench_pool::PoolConfig;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A `mysql_async::Pool` and the connections it opened.
pub struct MysqlPool {
    pool: Pool,
    opened: Arc<AtomicU64>,
}

impl MysqlPool {
    pub(crate) fn new(opts: &Opts, n: usize, config: &PoolConfig) -> MysqlPool {
        let n = n.max(1);
        let constraints = PoolConstraints::new(n, n).unwrap_or_default();
        let pool_opts = PoolOpts::new()
            .with_constraints(constraints)
            .with_reset_connection(false)
            .with_abs_conn_ttl(config.max_lifetime);
        let opened = Arc::new(AtomicU64::new(0));
        let count = opened.clone();
        let opts = OptsBuilder::from_opts(opts.clone())
            .pool_opts(pool_opts)
            .after_connect(move |_conn| {
                count.fetch_add(1, Relaxed);
                Box::pin(async { Ok(()) })
            });
        MysqlPool {
            pool: Pool::new(opts),
            opened,
        }
    }
}

impl ClientPool<MysqlConn> for MysqlPool {
    fn get(&self) -> Checkout<'_, MysqlConn> {
        let get = self.pool.get_conn();
        Box::pin(async move {
            get.await
                .map(MysqlConn::new)
                .map_err(|e| errors::classify(&e))
        })
    }

    fn counts(&self) -> ClientPoolCounts {
        let m = self.pool.metrics();
        ClientPoolCounts {
            opened: self.opened.load(Relaxed),
            open: m.connection_count.load(Relaxed) as u64,
            connect_errors: m.create_failed.load(Relaxed) as u64,
            idle: m.connections_in_pool.load(Relaxed) as u64,
        }
    }
}
