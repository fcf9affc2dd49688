//! One target type over every protocol, chosen by the URL's scheme, so the
//! engine drives all of them through the same strategies and load models.
use crate::grpc::{GrpcConn, GrpcTarget};
use crate::http1::{H1Pipe, Http1Conn, Http1Target};
use crate::http2::{H2cConn, Http2Target};
use crate::https::{HttpsConn, HttpsTarget};
use crate::library::{ClientPool, Wrapped};
use crate::mysql::{MysqlConn, MysqlTarget};
use crate::postgres::PostgresTarget;
use crate::postgres::{PgConnection, PgTarget};
use crate::redis::{RedisConnection, RedisLoad, RedisTarget};
use crate::source::Sources;
use crate::{ErrorKind, Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use poolbench_model::{Scheme, StrategySpec};
use poolbench_pool::{Connector, PoolConfig};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A target of any protocol poolbench drives.
#[derive(Clone, Debug)]
pub enum AnyTarget {
    Http1(Http1Target),
    Http2(Http2Target),
    Https(HttpsTarget),
    Grpc(GrpcTarget),
    Postgres(PgTarget, Option<String>),
    Mysql(MysqlTarget),
    Redis(RedisLoad),
}

/// A connection opened by an [`AnyTarget`].
pub enum AnyConn {
    Http1(Http1Conn),
    /// An HTTP/1.1 connection pipelined (`pipeline:NxD`).
    Http1Pipe(H1Pipe),
    Http2(H2cConn),
    Https(HttpsConn),
    Grpc(GrpcConn),
    Postgres(PgConnection),
    Mysql(MysqlConn),
    Redis(RedisConnection),
}

impl AnyTarget {
    /// The target `spec` names, resolved to `addr`, its connections from
    /// `options.source` (checked here: each address can be bound).
    pub fn open(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<AnyTarget, TargetError> {
        let sources = Sources::of_options(options, addr).map_err(TargetError::Setup)?;
        Self::of_scheme(spec, addr, options, connect_timeout)?.with_sources(sources)
    }

    /// The same target, its connections bound to `sources` in turn; an
    /// error for a protocol whose client library dials for itself.
    fn with_sources(self, s: Sources) -> Result<AnyTarget, TargetError> {
        if s.addrs().is_empty() {
            return Ok(self);
        }
        Ok(match self {
            AnyTarget::Http1(t) => AnyTarget::Http1(t.with_sources(s)),
            AnyTarget::Http2(t) => AnyTarget::Http2(t.with_sources(s)),
            AnyTarget::Https(t) => AnyTarget::Https(t.with_sources(s)),
            AnyTarget::Grpc(t) => AnyTarget::Grpc(t.with_sources(s)),
            AnyTarget::Postgres(t, setup) => {
                AnyTarget::Postgres(t.with_sources(s).map_err(TargetError::Setup)?, setup)
            }
            AnyTarget::Redis(t) => AnyTarget::Redis(t.with_sources(s)),
            AnyTarget::Mysql(_) => return Err(TargetError::Setup(
                "--source does not apply to mysql:// targets: mysql_async opens its own sockets"
                    .into(),
            )),
        })
    }

    fn of_scheme(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<AnyTarget, TargetError> {
        let Some(protocol) = Scheme::of(&spec.scheme) else {
            return Err(TargetError::Scheme {
                url: spec.url.clone(),
                scheme: spec.scheme.clone(),
            });
        };
        match protocol {
            Scheme::Http => {
                Http1Target::new(spec, addr, options, connect_timeout).map(AnyTarget::Http1)
            }
            Scheme::H2c => {
                Http2Target::new(spec, addr, options, connect_timeout).map(AnyTarget::Http2)
            }
            Scheme::Https => {
                HttpsTarget::new(spec, addr, options, connect_timeout).map(AnyTarget::Https)
            }
            Scheme::Grpc | Scheme::Grpcs => {
                GrpcTarget::new(spec, addr, options, connect_timeout).map(AnyTarget::Grpc)
            }
            Scheme::Postgres => PostgresTarget::with_params(
                &spec.url,
                addr,
                options.query(),
                &options.params,
                options,
                connect_timeout,
            )
            .and_then(|t| t.with_mode(options.query_mode.unwrap_or_default()))
            .and_then(PgTarget::new)
            .map(|t| AnyTarget::Postgres(t, options.setup.clone()))
            .map_err(|e| TargetError::Invalid(spec.url.clone(), e)),
            Scheme::Mysql => MysqlTarget::new(
                &spec.url,
                addr,
                options.query(),
                &options.params,
                options.cacert.as_deref(),
                options.setup.as_deref(),
                connect_timeout,
            )
            .and_then(|t| t.with_client_cert(crate::tls::checked_client_files(options)?))
            .map(|t| t.with_tls_resume(options.tls_resume == poolbench_model::TlsResume::On))
            .map(AnyTarget::Mysql)
            .map_err(|e| TargetError::Invalid(spec.redacted(), e)),
            Scheme::Redis | Scheme::Rediss => crate::tls::checked_client_files(options)
                .and_then(|_| {
                    RedisTarget::with_options(
                        &spec.url,
                        addr,
                        options.command(),
                        options,
                        connect_timeout,
                    )
                })
                .map(|t| AnyTarget::Redis(RedisLoad::new(t)))
                .map_err(|e| TargetError::Invalid(spec.url.clone(), e)),
        }
    }
}

fn mismatch() -> RequestError {
    RequestError::broken(ErrorKind::Protocol, "connection of another protocol")
}

/// Runs `$body` with `$t` and `$c` bound to the matching target and
/// connection; `$else` when they differ.
macro_rules! each {
    ($target:expr, $conn:expr, |$t:ident, $c:ident| $body:expr, $else:expr) => {
        match ($target, $conn) {
            (AnyTarget::Http1($t), AnyConn::Http1($c)) => $body,
            (AnyTarget::Http2($t), AnyConn::Http2($c)) => $body,
            (AnyTarget::Https($t), AnyConn::Https($c)) => $body,
            (AnyTarget::Grpc($t), AnyConn::Grpc($c)) => $body,
            (AnyTarget::Postgres($t, _), AnyConn::Postgres($c)) => $body,
            (AnyTarget::Mysql($t), AnyConn::Mysql($c)) => $body,
            (AnyTarget::Redis($t), AnyConn::Redis($c)) => $body,
            _ => $else,
        }
    };
}

impl Connector for AnyTarget {
    type Conn = AnyConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<AnyConn, RequestError> {
        match self {
            AnyTarget::Http1(t) => match t.depth() {
                None => t.connect().await.map(AnyConn::Http1),
                Some(d) => t.connect_pipelined(d).await.map(AnyConn::Http1Pipe),
            },
            // Every connect but HTTP/1.1's (0.4 KB) is a large future (1.5 to
            // 2.2 KB): boxed, so it does not grow every other protocol's
            // future, all alive at once while c connections open.
            AnyTarget::Http2(t) => Box::pin(t.connect()).await.map(AnyConn::Http2),
            AnyTarget::Https(t) => Box::pin(t.connect()).await.map(AnyConn::Https),
            AnyTarget::Grpc(t) => Box::pin(t.connect()).await.map(AnyConn::Grpc),
            AnyTarget::Postgres(t, _) => Box::pin(t.connect()).await.map(AnyConn::Postgres),
            AnyTarget::Mysql(t) => Box::pin(t.connect()).await.map(AnyConn::Mysql),
            AnyTarget::Redis(t) => Box::pin(t.connect()).await.map(AnyConn::Redis),
        }
    }

    async fn connect_exclusive(&self) -> Result<AnyConn, RequestError> {
        match self {
            AnyTarget::Postgres(t, _) => {
                Box::pin(t.connect_exclusive()).await.map(AnyConn::Postgres)
            }
            AnyTarget::Redis(t) => t.connect_exclusive().await.map(AnyConn::Redis),
            // Leased to one holder at a time: nothing to pipeline.
            AnyTarget::Http1(t) => t.connect().await.map(AnyConn::Http1),
            _ => self.connect().await,
        }
    }

    fn is_broken(&self, conn: &mut AnyConn) -> bool {
        if let AnyConn::Http1Pipe(c) = conn {
            return c.is_broken();
        }
        each!(self, conn, |t, c| t.is_broken(c), true)
    }

    fn streams(&self, conn: &AnyConn) -> usize {
        if let AnyConn::Http1Pipe(c) = conn {
            return c.depth();
        }
        each!(self, conn, |t, c| t.streams(c), 1)
    }

    fn advertised_streams(&self, conn: &AnyConn) -> Option<usize> {
        each!(self, conn, |t, c| t.advertised_streams(c), None)
    }

    fn share(&self, conn: &AnyConn) -> Option<AnyConn> {
        match (self, conn) {
            (_, AnyConn::Http1Pipe(c)) => Some(AnyConn::Http1Pipe(c.share())),
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.share(c).map(AnyConn::Http1),
            (AnyTarget::Http2(t), AnyConn::Http2(c)) => t.share(c).map(AnyConn::Http2),
            (AnyTarget::Https(t), AnyConn::Https(c)) => t.share(c).map(AnyConn::Https),
            (AnyTarget::Grpc(t), AnyConn::Grpc(c)) => t.share(c).map(AnyConn::Grpc),
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.share(c).map(AnyConn::Postgres),
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.share(c).map(AnyConn::Redis),
            _ => None,
        }
    }

    fn pipelined(&self, depth: usize) -> Option<AnyTarget> {
        match self {
            AnyTarget::Http1(t) => Some(AnyTarget::Http1(t.pipelined(depth))),
            _ => None,
        }
    }
}

impl Target for AnyTarget {
    async fn prepare(&self) -> Result<(), RequestError> {
        match self {
            AnyTarget::Http1(t) => t.prepare().await,
            AnyTarget::Http2(t) => t.prepare().await,
            AnyTarget::Https(t) => t.prepare().await,
            AnyTarget::Grpc(t) => t.prepare().await,
            AnyTarget::Postgres(t, Some(sql)) => t.setup(sql).await,
            AnyTarget::Mysql(t) => t.prepare().await,
            AnyTarget::Postgres(..) | AnyTarget::Redis(_) => Ok(()),
        }
    }

    fn follows_holder(&self) -> bool {
        match self {
            AnyTarget::Postgres(..) => true,
            AnyTarget::Mysql(t) => t.follows_holder(),
            AnyTarget::Redis(t) => t.follows_holder(),
            _ => false,
        }
    }

    async fn send(&self, conn: &mut AnyConn) -> Result<Reply, RequestError> {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.send(c).await,
            (AnyTarget::Http1(t), AnyConn::Http1Pipe(c)) => t.send_pipelined(c).await,
            // h2c and PostgreSQL box only their large, rare exchanges (the
            // h2 crate's client, tokio-postgres clients) themselves: the
            // lean client's and the sessions' are small, and boxing them
            // cost an allocation per request.
            (AnyTarget::Http2(t), AnyConn::Http2(c)) => t.send(c).await,
            // HTTP/1.1-or-2 over TLS and the tonic call are large futures:
            // boxed, as for connect.
            (AnyTarget::Https(t), AnyConn::Https(c)) => Box::pin(t.send(c)).await,
            (AnyTarget::Grpc(t), AnyConn::Grpc(c)) => Box::pin(t.send(c)).await,
            (AnyTarget::Postgres(t, _), AnyConn::Postgres(c)) => t.send(c).await,
            // mysql_async's exchange is a large future: boxed, as above.
            (AnyTarget::Mysql(t), AnyConn::Mysql(c)) => Box::pin(t.send(c)).await,
            (AnyTarget::Redis(t), AnyConn::Redis(c)) => t.send(c).await,
            _ => Err(mismatch()),
        }
    }

    fn client_pool(
        &self,
        spec: &StrategySpec,
        config: &PoolConfig,
    ) -> Option<Arc<dyn ClientPool<AnyConn>>> {
        match self {
            AnyTarget::Mysql(t) => Some(Arc::new(Wrapped {
                inner: t.client_pool(spec, config)?,
                wrap: AnyConn::Mysql,
            })),
            _ => None,
        }
    }

    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        match self {
            AnyTarget::Https(t) => t.tls_facts(),
            AnyTarget::Grpc(t) => t.tls_facts(),
            AnyTarget::Postgres(t, _) => t.tls_facts(),
            AnyTarget::Redis(t) => t.tls_facts(),
            _ => None,
        }
    }

    fn first_byte(&self, conn: &AnyConn) -> Option<std::time::Instant> {
        match (self, conn) {
            (AnyTarget::Http1(t), AnyConn::Http1(c)) => t.first_byte(c),
            (_, AnyConn::Http1Pipe(c)) => c.first_byte(),
            (AnyTarget::Http2(t), AnyConn::Http2(c)) => t.first_byte(c),
            (AnyTarget::Https(t), AnyConn::Https(c)) => t.first_byte(c),
            (AnyTarget::Grpc(t), AnyConn::Grpc(c)) => t.first_byte(c),
            _ => None,
        }
    }

    fn behind(&self, conn: &AnyConn) -> Option<std::time::Duration> {
        match conn {
            AnyConn::Http1Pipe(c) => c.behind(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::http2::Http2Target;
    use crate::postgres::PgTarget;
    use crate::Target;
    use std::future::Future;

    /// The size of the future `f` returns, without calling it.
    fn returned_size<A, B, F: Future>(_: impl FnOnce(A, B) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// The exchanges sent without a box stay small: every worker's task is
    /// sized for them (at c=10,000, each 100 bytes is 1 MB).
    #[test]
    fn unboxed_exchanges_are_small_futures() {
        let h2 = returned_size(<Http2Target as Target>::send);
        let pg = returned_size(<PgTarget as Target>::send);
        eprintln!("h2c send {h2} bytes, PostgreSQL send {pg} bytes");
        assert!(h2 <= 512, "h2c: {h2} bytes");
        assert!(pg <= 512, "PostgreSQL: {pg} bytes");
    }
}
