//! Opening a Redis connection: TCP, TLS through the run's own client (one
//! session store, handshakes counted, errors explained), then the `redis`
//! crate's multiplexed connection over that stream, its driver on the
//! calling runtime.
use super::errors::classify;
use crate::source::Sources;
use crate::tls::{name_of, TlsClient, TlsOptions, Verify};
use crate::{net, ErrorKind, RequestError, TargetOptions};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisConnectionInfo};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The TLS client of a `rediss://` URL naming `host`; `url_insecure` is the
/// URL's `#insecure`.
pub(super) fn tls_client(
    host: &str,
    url_insecure: bool,
    options: &TargetOptions,
) -> Result<TlsClient, String> {
    let mut settings = TlsOptions::of(options, &[]);
    if url_insecure {
        settings.verify = Verify::Nothing;
    }
    let client = TlsClient::new(settings).map_err(|e| e.to_string())?;
    Ok(client.named(name_of(host)?))
}

/// A connection to `addr` (from the next of `sources`), over TLS when `tls` is given; AUTH, SELECT and
/// the rest of the crate's setup done, all within `timeout` after the TCP
/// connect's own.
pub(super) async fn connect(
    info: &RedisConnectionInfo,
    (sources, addr): (&Sources, SocketAddr),
    tls: Option<&TlsClient>,
    timeout: Duration,
) -> Result<MultiplexedConnection, RequestError> {
    let tcp = net::tcp_connect(sources, addr, timeout).await?;
    let setup = async {
        match tls {
            Some(tls) => over(info, tls.handshake_tcp(tcp, timeout).await?).await,
            None => over(info, tcp).await,
        }
    };
    match tokio::time::timeout(timeout, setup).await {
        Ok(conn) => conn,
        Err(_) => Err(RequestError::broken(
            ErrorKind::Timeout,
            "connect to Redis: timed out",
        )),
    }
}

/// The crate's connection over `stream`, its driver spawned: it ends when
/// the last handle is dropped or the stream fails.
async fn over<C>(
    info: &RedisConnectionInfo,
    stream: C,
) -> Result<MultiplexedConnection, RequestError>
where
    C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (conn, driver) =
        MultiplexedConnection::new_with_config(info, stream, AsyncConnectionConfig::new())
            .await
            .map_err(|e| classify(&e))?;
    tokio::spawn(driver);
    Ok(conn)
}
