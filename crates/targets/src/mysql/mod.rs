//! `mysql://` and `mariadb://` under load through `mysql_async`: one
//! prepared statement per request (the binary protocol, prepared once per
//! connection by the client's statement cache). A MySQL connection answers
//! one query at a time, so the slot strategies queue on it as on HTTP/1.1.
mod conn;
mod errors;
mod idle_settings;
pub(crate) mod limits;
mod options;
mod pool;
mod tls;

use crate::library::ClientPool;
use crate::sql_params::{Params, TextParam};
use crate::{ErrorKind, Reply, RequestError, Target};
pub use conn::MysqlConn;
pub use errors::{classify, server_error_kind};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Row, Value};
pub use pool::MysqlPool;
use poolbench_model::StrategySpec;
use poolbench_pool::{Connector, PoolConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Opens connections to one MySQL or MariaDB server and runs one query per
/// request.
#[derive(Clone, Debug)]
pub struct MysqlTarget {
    opts: Opts,
    query: Arc<str>,
    params: Params,
    setup: Option<Arc<str>>,
    addr: SocketAddr,
    connect_timeout: Duration,
    /// With TLS on (`ssl-mode`): resume sessions across connections.
    tls_resume: bool,
}

impl MysqlTarget {
    /// A target for the `mysql://` or `mariadb://` URL `url`, resolved to
    /// `addr`, running `query` with `params` (see `--param`), trusting
    /// `cacert` for `ssl-mode=VERIFY_CA` and `VERIFY_IDENTITY`, after the
    /// `setup` statements.
    pub fn new(
        url: &str,
        addr: SocketAddr,
        query: &str,
        params: &[String],
        cacert: Option<&Path>,
        setup: Option<&str>,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        Ok(MysqlTarget {
            opts: options::options(url, addr, cacert)?,
            tls_resume: true,
            query: query.into(),
            params: Params::parse(params)?,
            setup: setup.map(Into::into),
            addr,
            connect_timeout,
        })
    }

    /// With `client` (certificate and key files), sessions present that
    /// certificate; TLS must be on (`ssl-mode` in the URL).
    pub fn with_client_cert(mut self, client: Option<(&Path, &Path)>) -> Result<Self, String> {
        self.opts = options::with_client_identity(self.opts, client)?;
        Ok(self)
    }

    /// With TLS on, resume sessions across the run's connections (the
    /// default) or never (`--tls-resume off`).
    pub fn with_tls_resume(mut self, resume: bool) -> Self {
        self.tls_resume = resume;
        self
    }

    /// Open a session, within the connect timeout.
    pub async fn session(&self) -> Result<MysqlConn, RequestError> {
        let opts = tls::session_options(&self.opts, self.tls_resume);
        match tokio::time::timeout(self.connect_timeout, Conn::new(opts)).await {
            Ok(r) => r.map(MysqlConn::new).map_err(|e| errors::classify(&e)),
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                format!("connect {}: timed out", self.addr),
            )),
        }
    }

    /// The MySQL client's own pool of `n` connections (`mysql-async:N`).
    pub fn library_pool(&self, n: usize, config: &PoolConfig) -> MysqlPool {
        MysqlPool::new(&self.opts, n, config)
    }
}

impl Connector for MysqlTarget {
    type Conn = MysqlConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<MysqlConn, RequestError> {
        let mut conn = self.session().await?;
        // Prepared now (and cached by the client), so a query the server
        // refuses or given the wrong number of values stops the run at its
        // first connect rather than failing every request.
        let statement = conn.0.prep(&*self.query).await.map_err(|e| {
            let e = errors::classify(&e);
            RequestError {
                message: format!("query \"{}\": {}", self.query, e.message),
                ..e
            }
        })?;
        let (n, given) = (usize::from(statement.num_params()), self.params.len());
        if n != given {
            return Err(RequestError::protocol(format!(
                "the query takes {n} parameter(s) and {given} --param given"
            )));
        }
        conn.1 = Some(statement);
        Ok(conn)
    }

    fn is_broken(&self, _conn: &mut MysqlConn) -> bool {
        // Errors that end a session say so (`RequestError::broken`).
        false
    }
}

impl Target for MysqlTarget {
    /// A session stays registered with the I/O driver of the load thread
    /// that opened it (`mysql_async` keeps its socket), and the idle
    /// connection handed out last in, first out mostly returns to the
    /// worker, and so the thread, that opened it; one used from another
    /// thread still works, its readiness passed on by the thread that
    /// opened it. Dealt over load threads with a driver each, the
    /// sessions carried about 6% more than on the multi-thread runtime's
    /// two workers against MariaDB at c=10 (6 rounds, 2026-11-29).
    fn follows_holder(&self) -> bool {
        true
    }

    async fn prepare(&self) -> Result<(), RequestError> {
        let Some(sql) = &self.setup else {
            return Ok(());
        };
        let mut conn = self.session().await?;
        let done = conn.0.query_drop(&**sql).await;
        let _ = conn.0.disconnect().await;
        done.map_err(|e| errors::classify(&e))
            .map_err(|e| RequestError {
                message: format!("setup: {}", e.message),
                ..e
            })
    }

    async fn send(&self, conn: &mut MysqlConn) -> Result<Reply, RequestError> {
        let params = match self.params.len() {
            0 => mysql_async::Params::Empty,
            _ => {
                mysql_async::Params::Positional(self.params.next().into_iter().map(value).collect())
            }
        };
        let rows = async {
            let MysqlConn(session, prepared) = conn;
            // The client's own pool hands out sessions not yet prepared.
            if prepared.is_none() {
                *prepared = Some(session.prep(&*self.query).await?);
            }
            let Some(statement) = prepared.as_ref() else {
                unreachable!("prepared above")
            };
            session
                .exec_iter(statement, params)
                .await?
                .reduce_and_drop(0u64, |n, _: Row| n + 1)
                .await
        }
        .await
        .map_err(|e| errors::classify(&e))?;
        Ok(Reply {
            status: 0,
            bytes: rows,
        })
    }

    fn client_pool(
        &self,
        spec: &StrategySpec,
        config: &PoolConfig,
    ) -> Option<Arc<dyn ClientPool<MysqlConn>>> {
        match spec {
            StrategySpec::MysqlAsync(Some(n)) => Some(Arc::new(self.library_pool(*n, config))),
            _ => None,
        }
    }
}

/// A parameter's text as a MySQL value: an integer when it is one written
/// plainly (`42`, not `042`), else a string the server converts.
fn value(p: TextParam) -> Value {
    match std::str::from_utf8(&p.0).ok().and_then(|s| {
        let n: i64 = s.parse().ok()?;
        (n.to_string() == s).then_some(n)
    }) {
        Some(n) => Value::Int(n),
        None => Value::Bytes(p.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_integers_go_as_integers_and_the_rest_as_strings() {
        assert_eq!(value(TextParam(b"42".to_vec())), Value::Int(42));
        assert_eq!(value(TextParam(b"-7".to_vec())), Value::Int(-7));
        assert_eq!(
            value(TextParam(b"042".to_vec())),
            Value::Bytes(b"042".to_vec())
        );
        assert_eq!(
            value(TextParam(b"u1".to_vec())),
            Value::Bytes(b"u1".to_vec())
        );
    }
}
