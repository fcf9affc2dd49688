//! PostgreSQL over tokio-postgres: one query per request, as the query mode
//! says (`prepared`: prepared once when the connection opens; `extended`:
//! the unnamed statement each time; `simple`: the simple query protocol).
//!
//! A connection is a tokio-postgres client. The client pipelines: several callers may send on one connection
//! at once, so `shared` and the other slot strategies multiplex it.
use super::params::{Params, TextParam};
use super::stream::{Endpoint, Opener, SslMode};
use crate::postgres::wire::PgWire;
use crate::source::Sources;
use crate::{ErrorKind, Reply, RequestError, Target, TargetOptions};
use poolbench_model::{QueryMode, TlsFacts, TlsResume};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::config::Host;
use tokio_postgres::types::{Kind, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};

/// Requests one connection carries at once when shared.
pub const PIPELINE_DEPTH: usize = 1024;

/// Opens connections to one PostgreSQL server and runs one query per request.
#[derive(Clone, Debug)]
pub struct PostgresTarget {
    /// Who logs in to what (TLS is the opener's: tokio-postgres is handed
    /// a stream already negotiated).
    config: Arc<Config>,
    opener: Opener,
    query: Arc<str>,
    params: Params,
    mode: QueryMode,
    connect_timeout: Duration,
}

/// One PostgreSQL connection (a handle to it: handles share the session).
#[derive(Clone)]
pub struct PgConn {
    client: Arc<Client>,
    /// The query prepared when the connection opened (`prepared` mode).
    statement: Option<Statement>,
}

impl PgConn {
    /// The client, for callers that run more than the prepared query.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The query prepared when the connection opened (`prepared` mode).
    pub fn statement(&self) -> Option<&Statement> {
        self.statement.as_ref()
    }
}

impl PostgresTarget {
    /// The TLS handshakes so far, where sessions use TLS.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.opener.tls_facts()
    }

    /// A target for the `postgres://` URL `url`, resolved to `addr`, running
    /// `query` (prepared on each new connection).
    pub fn new(
        url: &str,
        addr: SocketAddr,
        query: &str,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        Self::with_params(
            url,
            addr,
            query,
            &[],
            &TargetOptions::default(),
            connect_timeout,
        )
    }

    /// As [`PostgresTarget::new`], binding `params` (see `--param`) and
    /// TLS as `tls` says: the certificates in `cacert` trusted for
    /// `sslmode=verify-*`, `cert` and `key` where the URL has no `sslcert`
    /// and `sslkey`, `tls_resume`.
    pub fn with_params(
        url: &str,
        addr: SocketAddr,
        query: &str,
        params: &[String],
        tls: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let ssl = crate::postgres::libpq::take_ssl(url)?;
        let mut config = Config::from_str(&ssl.rest)
            .map_err(|e| format!("invalid PostgreSQL URL or DSN: {e}"))?;
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        let env_host = std::env::var("PGHOST").ok().filter(|h| !h.is_empty());
        let (host, endpoint) = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => (h.clone(), Endpoint::Tcp(addr)),
            Some(Host::Unix(dir)) => ("localhost".into(), Endpoint::unix(dir, addr.port())),
            None => match env_host {
                Some(h) if h.starts_with('/') => (
                    "localhost".into(),
                    Endpoint::unix(Path::new(&h), addr.port()),
                ),
                Some(h) => (h, Endpoint::Tcp(addr)),
                None => ("localhost".into(), Endpoint::Tcp(addr)),
            },
        };
        crate::postgres::libpq::complete(&mut config, &host, addr.port());
        let mode = match ssl.mode.or_else(|| std::env::var("PGSSLMODE").ok()) {
            Some(m) => SslMode::parse(&m)?,
            None => SslMode::Prefer,
        };
        let rootcert = ssl
            .rootcert
            .or_else(|| std::env::var("PGSSLROOTCERT").ok())
            .map(Into::into)
            .or_else(|| tls.cacert.clone());
        let own = (
            ssl.cert.map(Into::into).or_else(|| tls.cert.clone()),
            ssl.key.map(Into::into).or_else(|| tls.key.clone()),
        );
        let resume = tls.tls_resume == TlsResume::On;
        let opener =
            Opener::new(endpoint, &host, mode, rootcert, own, resume).map_err(|e| e.to_string())?;
        Ok(PostgresTarget {
            config: Arc::new(config),
            opener,
            query: query.into(),
            params: Params::parse(params)?,
            mode: QueryMode::Prepared,
            connect_timeout,
        })
    }

    /// Sessions bound to `sources` in turn (`--source`); a Unix socket
    /// has no source address.
    pub fn with_sources(mut self, sources: Sources) -> Result<Self, String> {
        if !sources.addrs().is_empty() && !matches!(self.opener.endpoint, Endpoint::Tcp(_)) {
            return Err("--source applies to TCP connections, not a Unix socket".into());
        }
        self.opener.sources = sources;
        Ok(self)
    }

    /// The same target sending its query as `mode` says. In simple mode
    /// the query must name each `--param` (nothing checks it later).
    pub fn with_mode(self, mode: QueryMode) -> Result<Self, String> {
        let named = super::modes::placeholders(&self.query);
        if mode == QueryMode::Simple && named != self.params.len() {
            return Err(format!(
                "the query takes {named} parameter(s) and {} --param given",
                self.params.len()
            ));
        }
        Ok(PostgresTarget { mode, ..self })
    }

    /// How requests send the query.
    pub(crate) fn mode(&self) -> QueryMode {
        self.mode
    }

    /// The query each request runs.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// The values bound to the query's parameters.
    pub(crate) fn params(&self) -> &Params {
        &self.params
    }

    /// The same server for a survey (`survey.rs`): its sessions named
    /// `application`, logging in to database `db` where given
    /// (PgBouncer's admin console is the database `pgbouncer`).
    pub(crate) fn for_survey(&self, application: &str, db: Option<&str>) -> PostgresTarget {
        let mut config = (*self.config).clone();
        config.application_name(application);
        if let Some(db) = db {
            config.dbname(db);
        }
        PostgresTarget {
            config: Arc::new(config),
            ..self.clone()
        }
    }

    /// The database logged in to, and the TCP port dialed (`None`: a
    /// Unix socket).
    pub(crate) fn database_and_port(&self) -> (String, Option<u16>) {
        let db = self.config.get_dbname().unwrap_or_default().to_string();
        match &self.opener.endpoint {
            Endpoint::Tcp(addr) => (db, Some(addr.port())),
            Endpoint::Unix(_) => (db, None),
        }
    }

    /// Open a bare client (no statement prepared).
    pub async fn client(&self) -> Result<Client, RequestError> {
        self.client_with(&self.config).await
    }

    /// A bare client of database `dbname` on the same server, as the
    /// same user (a pooler's admin console: `pgbouncer`).
    pub(crate) async fn client_to(&self, dbname: &str) -> Result<Client, RequestError> {
        let mut config = (*self.config).clone();
        config.dbname(dbname);
        self.client_with(&config).await
    }

    async fn client_with(&self, config: &Config) -> Result<Client, RequestError> {
        let connect = async {
            let stream = self.opener.open(self.connect_timeout).await?;
            let (client, conn) = config
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
            Err(_) => Err(self.timed_out()),
        }
    }

    fn timed_out(&self) -> RequestError {
        let to = match &self.opener.endpoint {
            Endpoint::Tcp(addr) => addr.to_string(),
            Endpoint::Unix(path) => path.display().to_string(),
        };
        RequestError::broken(ErrorKind::Timeout, format!("connect {to}: timed out"))
    }

    /// Open a session driven by its holder alone (see [`crate::postgres::wire`]),
    /// with the query prepared.
    pub(crate) async fn connect_wire(&self) -> Result<PgWire, RequestError> {
        let connect = async {
            let stream = self.opener.open(self.connect_timeout).await?;
            let check = self.mode != QueryMode::Simple;
            PgWire::open(stream, &self.config, &self.query, self.params.len(), check).await
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r,
            Err(_) => Err(self.timed_out()),
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
        if self.mode != QueryMode::Prepared {
            return Ok(PgConn {
                client: Arc::new(client),
                statement: None,
            });
        }
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
            statement: Some(statement),
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
        let values: Vec<TextParam> = self.params.next();
        let rows = match (&conn.statement, self.mode) {
            (_, QueryMode::Simple) => {
                let text = super::modes::inline(&self.query, &values);
                let messages = conn
                    .client
                    .simple_query(&text)
                    .await
                    .map_err(|e| classify(&e))?;
                messages
                    .iter()
                    .filter(|m| matches!(m, SimpleQueryMessage::Row(_)))
                    .count()
            }
            (Some(statement), QueryMode::Prepared) => {
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                let rows = conn.client.query(statement, &refs).await;
                rows.map_err(|e| classify(&e))?.len()
            }
            _ => {
                // The unnamed statement, its parameters' types left to the
                // server (OID 0), in one round trip.
                let unspecified = Type::new("unspecified".into(), 0, Kind::Simple, "".into());
                let typed: Vec<(&(dyn ToSql + Sync), Type)> = values
                    .iter()
                    .map(|v| (v as &(dyn ToSql + Sync), unspecified.clone()))
                    .collect();
                let rows = conn.client.query_typed(&self.query, &typed).await;
                rows.map_err(|e| classify(&e))?.len()
            }
        };
        Ok(Reply {
            status: 0,
            bytes: rows as u64,
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
            sqlstate: crate::SqlState::parse(db.code().code()),
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
