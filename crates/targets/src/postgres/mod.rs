//! `postgres://` under load: exclusive pools get sessions their holder
//! drives alone (`crate::postgres::wire`, one write and one read per query, as
//! pgbench); the slot strategies get tokio-postgres clients, which pipeline
//! the queries of several holders over one connection.
mod client;
mod idle_settings;
pub(crate) mod libpq;
pub(crate) mod limits;
pub(crate) mod modes;
mod params;
mod pgbouncer;
mod pooler_idle;
mod stream;
mod survey_query;
pub(crate) mod wire;

use crate::{Reply, RequestError, Target};
use bytes::Bytes;
pub use client::{classify, PgConn, PostgresTarget, PIPELINE_DEPTH};
use poolbench_model::QueryMode;
use poolbench_pool::Connector;
use wire::PgWire;

/// Opens PostgreSQL connections and runs one query per request, sent as
/// the query mode says.
#[derive(Clone, Debug)]
pub struct PgTarget {
    pipelined: PostgresTarget,
    /// The sessions' request (see [`modes::encode`]): encoded once when the
    /// parameters are fixed.
    request: Option<Bytes>,
    /// `prepared` mode: the Parse of the named statement, leading a
    /// session's first request.
    parse: Option<Bytes>,
}

/// A PostgreSQL connection of either kind.
pub enum PgConnection {
    /// A tokio-postgres client (or a handle to one).
    Pipelined(PgConn),
    /// A session driven by its holder (boxed: it keeps its read buffer).
    Wire(Box<PgWire>),
}

impl PgTarget {
    /// Sessions bound to `sources` in turn (`--source`).
    pub fn with_sources(mut self, sources: crate::Sources) -> Result<Self, String> {
        self.pipelined = self.pipelined.with_sources(sources)?;
        Ok(self)
    }

    /// The TLS handshakes so far, where sessions use TLS.
    pub fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        self.pipelined.tls_facts()
    }

    /// Fails when the query cannot be sent in its mode (a NUL byte in
    /// simple mode's text).
    pub fn new(pipelined: PostgresTarget) -> Result<Self, String> {
        let (mode, query, params) = (pipelined.mode(), pipelined.query(), pipelined.params());
        let request = match params.is_fixed() {
            true => Some(modes::encode(mode, query, &params.next())?),
            false => None,
        };
        let parse = match mode {
            QueryMode::Prepared => Some(modes::encode_parse(query)?),
            _ => None,
        };
        Ok(PgTarget {
            pipelined,
            request,
            parse,
        })
    }

    /// Run `sql` once on a new connection (the `--setup` statements).
    pub async fn setup(&self, sql: &str) -> Result<(), RequestError> {
        self.pipelined.setup(sql).await
    }
}

impl Connector for PgTarget {
    type Conn = PgConnection;
    type Error = RequestError;

    async fn connect(&self) -> Result<PgConnection, RequestError> {
        let conn = self.pipelined.connect().await?;
        // The same check as the sessions', so the run stops at its first
        // connect rather than failing every request.
        if let Some(statement) = conn.statement() {
            let given = self.pipelined.params().len();
            wire::check_parameters(statement.params().len(), given)?;
        }
        Ok(PgConnection::Pipelined(conn))
    }

    async fn connect_exclusive(&self) -> Result<PgConnection, RequestError> {
        let wire = self.pipelined.connect_wire().await?;
        Ok(PgConnection::Wire(Box::new(wire)))
    }

    fn is_broken(&self, conn: &mut PgConnection) -> bool {
        match conn {
            PgConnection::Pipelined(c) => self.pipelined.is_broken(c),
            PgConnection::Wire(w) => w.is_broken(),
        }
    }

    fn streams(&self, conn: &PgConnection) -> usize {
        match conn {
            PgConnection::Pipelined(_) => PIPELINE_DEPTH,
            PgConnection::Wire(_) => 1,
        }
    }

    fn share(&self, conn: &PgConnection) -> Option<PgConnection> {
        match conn {
            PgConnection::Pipelined(c) => Some(PgConnection::Pipelined(c.clone())),
            PgConnection::Wire(_) => None,
        }
    }
}

impl Target for PgTarget {
    /// Sessions (`wire`) follow their holder; tokio-postgres clients,
    /// handed only to the slot strategies, keep their connection task.
    fn follows_holder(&self) -> bool {
        true
    }

    async fn send(&self, conn: &mut PgConnection) -> Result<Reply, RequestError> {
        match conn {
            // tokio-postgres's exchange is a large future: boxed, so the
            // sessions' (sent without an allocation) size the caller's.
            PgConnection::Pipelined(c) => Box::pin(self.pipelined.send(c)).await,
            PgConnection::Wire(w) => {
                let parse = self.parse.as_deref();
                match &self.request {
                    Some(request) => w.exchange(request, parse).await,
                    None => {
                        let p = &self.pipelined;
                        let request = modes::encode(p.mode(), p.query(), &p.params().next())
                            .map_err(|e| RequestError {
                                broken: false,
                                ..RequestError::protocol(e)
                            })?;
                        w.exchange(&request, parse).await
                    }
                }
            }
        }
    }
}
