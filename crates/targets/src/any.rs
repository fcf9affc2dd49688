//! One target type over every protocol, chosen by the URL's scheme, so the
//! engine drives all of them through the same strategies and load models.
use crate::http1::{Http1Conn, Http1Target};
use crate::postgres::{PgConn, PostgresTarget};
use crate::redis::{RedisConn, RedisTarget};
use crate::{ErrorKind, Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;

/// A target of any protocol poolbench drives.
#[derive(Clone, Debug)]
pub enum AnyTarget {
    Http1(Http1Target),
    Postgres(PostgresTarget, Option<String>),
    Redis(RedisTarget),
}

/// A connection opened by an [`AnyTarget`].
pub enum AnyConn {
    Http1(Http1Conn),
    Postgres(PgConn),
    Redis(RedisConn),
}

impl AnyTarget {
    /// The target `spec` names, resolved to `addr`.
    pub fn open(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<AnyTarget, TargetError> {
        match spec.scheme.as_str() {
            "http" => Ok(AnyTarget::Http1(Http1Target::new(
                spec,
                addr,
                connect_timeout,
            ))),
            "postgres" | "postgresql" => {
                PostgresTarget::new(&spec.url, addr, options.query(), connect_timeout)
                    .map(|t| AnyTarget::Postgres(t, options.setup.clone()))
                    .map_err(|e| TargetError::Invalid(spec.url.clone(), e))
            }
            "redis" => RedisTarget::new(&spec.url, addr, options.command(), connect_timeout)
                .map(AnyTarget::Redis)
                .map_err(|e| TargetError::Invalid(spec.url.clone(), e)),
            other => Err(TargetError::Scheme {
                url: spec.url.clone(),
                scheme: other.to_string(),
            }),
        }
    }
}

fn mismatch() -> RequestError {
    RequestError::broken(ErrorKind::Protocol, "connection of another protocol")
}

impl Connector for AnyTarget {
    type Conn = AnyConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<AnyConn, RequestError> {
        match self {
            AnyTarget::Http1(t) => t.connect().await.map(AnyConn::Http1),
            AnyTarget::Postgres(t, _) => t.connect().await.map(AnyConn::Postgres),
            AnyTarget::Redis(t) => t.connect().await.map(AnyConn::Redis),
        }
    }

    #[allow(unreachable_patterns)]
    fn is_broken(&self, conn: &mut AnyConn) -> bool {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.is_broken(c),
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.is_broken(c),
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.is_broken(c),
            _ => true,
        }
    }

    #[allow(unreachable_patterns)]
    fn streams(&self, conn: &AnyConn) -> usize {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.streams(c),
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.streams(c),
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.streams(c),
            _ => 1,
        }
    }

    #[allow(unreachable_patterns)]
    fn share(&self, conn: &AnyConn) -> Option<AnyConn> {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.share(c).map(AnyConn::Http1),
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.share(c).map(AnyConn::Postgres),
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.share(c).map(AnyConn::Redis),
            _ => None,
        }
    }
}

impl Target for AnyTarget {
    async fn prepare(&self) -> Result<(), RequestError> {
        match self {
            AnyTarget::Http1(t) => t.prepare().await,
            AnyTarget::Postgres(t, Some(sql)) => t.setup(sql).await,
            AnyTarget::Postgres(..) | AnyTarget::Redis(_) => Ok(()),
        }
    }

    #[allow(unreachable_patterns)]
    async fn send(&self, conn: &mut AnyConn) -> Result<Reply, RequestError> {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.send(c).await,
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.send(c).await,
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.send(c).await,
            _ => Err(mismatch()),
        }
    }
}
