//! PostgreSQL over tokio-postgres: one prepared query per request.
//!
//! A connection is a tokio-postgres client with the query prepared once when
//! it opens. The client pipelines: several callers may send on one connection
//! at once, so `shared` and the other slot strategies multiplex it.
use crate::postgres::wire::PgWire;
use crate::{ErrorKind, Reply, RequestError, Target};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_postgres::{Client, Config, NoTls, Statement};

/// Requests one connection carries at once when shared.
pub const PIPELINE_DEPTH: usize = 1024;

/// Opens connections to one PostgreSQL server and runs one query per request.
#[derive(Clone, Debug)]
pub struct PostgresTarget {
    config: Arc<Config>,
    addr: SocketAddr,
    query: Arc<str>,
    connect_timeout: Duration,
}

/// One PostgreSQL connection (a handle to it: handles share the session).
#[derive(Clone)]
pub struct PgConn {
    client: Arc<Client>,
    statement: Statement,
}

impl PgConn {
    /// The client, for callers that run more than the prepared query.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The query prepared when the connection opened.
    pub fn statement(&self) -> &Statement {
        &self.statement
    }
}

impl PostgresTarget {
    /// A target for the `postgres://` URL `url`, resolved to `addr`, running
    /// `query` (prepared on each new connection).
    pub fn new(
        url: &str,
        addr: SocketAddr,
        query: &str,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let mut config =
            Config::from_str(url).map_err(|e| format!("invalid PostgreSQL URL or DSN: {e}"))?;
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => std::env::var("PGHOST").unwrap_or_else(|_| "localhost".into()),
        };
        crate::postgres::libpq::complete(&mut config, &host, addr.port());
        Ok(PostgresTarget {
            config: Arc::new(config),
            addr,
            query: query.into(),
            connect_timeout,
        })
    }

    /// Open a bare client (no statement prepared).
    pub async fn client(&self) -> Result<Client, RequestError> {
        let connect = async {
            let stream = TcpStream::connect(self.addr).await.map_err(|e| {
                RequestError::broken(ErrorKind::of_io(&e), format!("connect {}: {e}", self.addr))
            })?;
            let _ = stream.set_nodelay(true);
            let (client, conn) = self
                .config
                .connect_raw(stream, NoTls)
                .await
                .map_err(|e| classify(&e))?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok(client)
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r,
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                format!("connect {}: timed out", self.addr),
            )),
        }
    }

    /// Open a session driven by its holder alone (see [`crate::postgres::wire`]),
    /// with the query prepared.
    pub(crate) async fn connect_wire(&self) -> Result<PgWire, RequestError> {
        let connect = async {
            let stream = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
            PgWire::open(stream, &self.config, &self.query).await
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r,
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                format!("connect {}: timed out", self.addr),
            )),
        }
    }

    /// Run `sql` once on a new connection (the `--setup` statements).
    pub async fn setup(&self, sql: &str) -> Result<(), RequestError> {
        let client = self.client().await?;
        client
            .batch_execute(sql)
            .await
            .map_err(|e| classify(&e))
            .map_err(|e| RequestError {
                message: format!("setup: {}", e.message),
                ..e
            })
    }
}

impl Connector for PostgresTarget {
    type Conn = PgConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<PgConn, RequestError> {
        let client = self.client().await?;
        let statement = client
            .prepare(&self.query)
            .await
            .map_err(|e| classify(&e))
            .map_err(|e| RequestError {
                message: format!("query \"{}\": {}", self.query, e.message),
                ..e
            })?;
        Ok(PgConn {
            client: Arc::new(client),
            statement,
        })
    }

    fn is_broken(&self, conn: &mut PgConn) -> bool {
        conn.client.is_closed()
    }

    fn streams(&self, _conn: &PgConn) -> usize {
        PIPELINE_DEPTH
    }

    fn share(&self, conn: &PgConn) -> Option<PgConn> {
        Some(conn.clone())
    }
}

impl Target for PostgresTarget {
    async fn send(&self, conn: &mut PgConn) -> Result<Reply, RequestError> {
        let rows = conn
            .client
            .query(&conn.statement, &[])
            .await
            .map_err(|e| classify(&e))?;
        Ok(Reply {
            status: 0,
            bytes: rows.len() as u64,
        })
    }
}

/// Count a tokio-postgres error by kind. An error the server reported
/// leaves the connection usable unless it ended the session.
pub fn classify(e: &tokio_postgres::Error) -> RequestError {
    if let Some(db) = e.as_db_error() {
        let (kind, broken) = crate::postgres::wire::db_error_kind(db.severity(), db.code().code());
        return RequestError {
            kind,
            broken,
            unsent: false,
            message: format!("{} ({})", db.message(), db.code().code()),
            code: None,
        };
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return RequestError::broken(ErrorKind::of_io(io), e);
        }
        source = s.source();
    }
    let kind = if e.is_closed() {
        ErrorKind::Reset
    } else {
        ErrorKind::Protocol
    };
    RequestError::broken(kind, e)
}
