//! `grpc://` and `grpcs://`: unary `helloworld.Greeter/SayHello` through the
//! tonic-generated client, over HTTP/2 connections the strategies manage.
use crate::h2conn::{kind_of, H2Conn, H2Service};
use crate::http2::request_uri;
use crate::tls::{self, TlsClient};
use crate::{ErrorKind, Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use http::Uri;
use poolbench_greeter::{GreeterClient, HelloRequest};
use poolbench_pool::Connector;
use std::net::SocketAddr;
use std::time::Duration;
use tonic::Code;

/// The name sent in every `HelloRequest`.
const NAME: &str = "poolbench";

/// Opens HTTP/2 connections (TLS for `grpcs://`) to one address and calls
/// `SayHello`.
#[derive(Clone, Debug)]
pub struct GrpcTarget {
    addr: SocketAddr,
    tls: Option<TlsClient>,
    origin: Uri,
    connect_timeout: Duration,
}

/// One gRPC connection (or a handle to one) and the client over it.
pub struct GrpcConn {
    h2: H2Conn,
    client: GreeterClient<H2Service>,
}

impl GrpcTarget {
    /// A target for `spec` (`grpc` or `grpcs`), already resolved to `addr`.
    pub fn new(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, TargetError> {
        let secure = spec.scheme == "grpcs";
        let tls = match secure {
            true => Some(TlsClient::new(spec, options, &[b"h2"])?),
            false => None,
        };
        let origin = request_uri(if secure { "https" } else { "http" }, spec);
        Ok(GrpcTarget {
            addr,
            tls,
            origin,
            connect_timeout,
        })
    }

    async fn handshake(&self) -> Result<H2Conn, RequestError> {
        let tcp = crate::net::tcp_connect(self.addr, self.connect_timeout).await?;
        let Some(tls) = &self.tls else {
            return H2Conn::handshake(tcp).await;
        };
        let stream = tls.handshake(tcp, self.connect_timeout).await?;
        if tls::alpn(&stream) != Some(b"h2") {
            return Err(RequestError::broken(
                ErrorKind::Protocol,
                "not a gRPC server: it did not agree to HTTP/2 by ALPN",
            ));
        }
        H2Conn::handshake(stream).await
    }

    fn client(&self, h2: &H2Conn) -> GreeterClient<H2Service> {
        GreeterClient::with_origin(h2.service(), self.origin.clone())
    }
}

impl Connector for GrpcTarget {
    type Conn = GrpcConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<GrpcConn, RequestError> {
        let h2 = match tokio::time::timeout(self.connect_timeout, self.handshake()).await {
            Ok(h2) => h2?,
            Err(_) => {
                return Err(RequestError::broken(
                    ErrorKind::Timeout,
                    "HTTP/2 handshake timed out",
                ))
            }
        };
        let client = self.client(&h2);
        Ok(GrpcConn { h2, client })
    }

    fn is_broken(&self, conn: &mut GrpcConn) -> bool {
        conn.h2.is_broken()
    }

    fn streams(&self, conn: &GrpcConn) -> usize {
        conn.h2.streams()
    }

    fn share(&self, conn: &GrpcConn) -> Option<GrpcConn> {
        Some(GrpcConn {
            h2: conn.h2.share(),
            client: conn.client.clone(),
        })
    }
}

impl Target for GrpcTarget {
    /// One call on a fresh connection: a server without the Greeter
    /// (UNIMPLEMENTED) or one that does not answer gRPC is refused here. A
    /// transport failure is tried once more on a new connection, then
    /// refused too: the run starts only after the Greeter has answered.
    async fn prepare(&self) -> Result<(), RequestError> {
        let mut failure = None;
        for _ in 0..2 {
            let mut conn = self.connect().await?;
            match self.send(&mut conn).await {
                Ok(_) => return Ok(()),
                Err(e) if e.code == Some(Code::Unimplemented as u16) => {
                    return Err(RequestError::broken(
                        ErrorKind::Protocol,
                        format!("not a helloworld.Greeter: {}", e.message),
                    ))
                }
                Err(e) if e.message.contains("protocol error") => {
                    return Err(RequestError::broken(
                        ErrorKind::Protocol,
                        format!("not a gRPC server: {}", e.message),
                    ))
                }
                // A status the Greeter itself gave (e.g. INTERNAL from
                // --fail-rate): it is there.
                Err(e) if e.kind == ErrorKind::Status => return Ok(()),
                Err(e) => failure = Some(e),
            }
        }
        Err(failure
            .unwrap_or_else(|| RequestError::broken(ErrorKind::Protocol, "no answer to SayHello")))
    }

    async fn send(&self, conn: &mut GrpcConn) -> Result<Reply, RequestError> {
        // A connection closed or going away fails here, unsent, before tonic
        // would turn it into a status without a cause.
        conn.h2.ready().await?;
        let request = HelloRequest {
            name: NAME.to_string(),
        };
        match conn.client.say_hello(request).await {
            Ok(reply) => Ok(Reply {
                status: Code::Ok as u16,
                bytes: reply.into_inner().message.len() as u64,
            }),
            Err(status) => Err(from_status(&status, conn.h2.is_broken())),
        }
    }
}

/// A gRPC status as an error counted by its code; one raised by the
/// transport (its source an h2 error) is counted by the transport's kind.
fn from_status(status: &tonic::Status, broken: bool) -> RequestError {
    let message = format!("gRPC {:?}: {}", status.code(), status.message());
    let transport = std::error::Error::source(status).and_then(|s| s.downcast_ref::<h2::Error>());
    let error = match transport {
        Some(e) => {
            let (kind, ends_connection) = kind_of(e);
            let graceful = e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR);
            RequestError {
                broken: broken || ends_connection,
                unsent: graceful,
                ..RequestError::broken(kind, message)
            }
        }
        None => RequestError {
            broken,
            ..RequestError::broken(ErrorKind::Status, message)
        },
    };
    error.with_code(status.code() as u16)
}
