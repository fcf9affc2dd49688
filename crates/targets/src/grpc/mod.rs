//! `grpc://` and `grpcs://`: any unary method, over the lean HTTP/2 client
//! (`http2::wire`) the strategies manage. The method and its request message
//! come from `--proto` files, the server's reflection, or the built-in
//! `helloworld.Greeter` (the default); the message is encoded from JSON
//! once, or per call when it holds placeholders.

mod message;
mod reflect;
mod schema;

use crate::http2::request_uri;
use crate::http2::wire::H2Wire;
use crate::source::Sources;
use crate::tls::{self, TlsClient};
use crate::{ErrorKind, Reply, RequestError, Target, TargetError, TargetOptions, TargetSpec};
use http::Uri;
use message::GrpcMessage;
use poolbench_model::GrpcOptions;
use poolbench_pool::Connector;
use schema::{Method, GREETER_CALL};
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The Greeter's request when `--data` is not given.
const GREETER_DATA: &str = r#"{"name": "poolbench"}"#;

/// gRPC's `UNIMPLEMENTED`.
const UNIMPLEMENTED: u16 = 12;

/// Opens HTTP/2 connections (TLS for `grpcs://`) to one address and calls
/// one unary method.
#[derive(Clone, Debug)]
pub struct GrpcTarget {
    addr: SocketAddr,
    tls: Option<TlsClient>,
    origin: Uri,
    authority: String,
    connect_timeout: Duration,
    sources: Sources,
    /// User metadata, lower-cased names.
    metadata: Vec<(String, String)>,
    /// `package.Service/Method`.
    call: String,
    /// The request message's JSON.
    data: Option<String>,
    /// The method and its encoded request: known when the target opens
    /// (from files or the Greeter), or by reflection in `prepare`.
    ready: Arc<OnceLock<Prepared>>,
}

/// A method with its header block and message.
#[derive(Debug)]
struct Prepared {
    method: Method,
    block: Arc<[u8]>,
    message: GrpcMessage,
}

/// A gRPC connection: the lean HTTP/2 client's.
pub type GrpcConn = H2Wire;

impl GrpcTarget {
    /// A target for `spec` (`grpc` or `grpcs`), already resolved to `addr`.
    pub fn new(
        spec: &TargetSpec,
        addr: SocketAddr,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, TargetError> {
        let secure = spec.protocol() == poolbench_model::Scheme::Grpcs;
        let tls = match secure {
            true => Some(TlsClient::for_url(spec, options, &[b"h2"])?),
            false => None,
        };
        let g = &options.grpc;
        let call = g.call.clone().unwrap_or_else(|| GREETER_CALL.to_string());
        schema::split_call(&call).map_err(TargetError::Setup)?;
        let target = GrpcTarget {
            addr,
            tls,
            origin: request_uri(if secure { "https" } else { "http" }, spec),
            authority: options
                .http
                .host
                .clone()
                .unwrap_or_else(|| spec.authority.clone()),
            connect_timeout,
            sources: Sources::default(),
            metadata: metadata(&options.http.headers)?,
            data: data(g)?,
            call,
            ready: Arc::new(OnceLock::new()),
        };
        let known = match (g.proto.is_empty(), target.is_greeter()) {
            (false, _) => Some((
                schema::compile(&g.proto, &g.import_paths).map_err(TargetError::Setup)?,
                "the --proto files",
            )),
            (true, true) => Some((schema::greeter_pool(), "the built-in Greeter")),
            (true, false) => None,
        };
        if let Some((pool, source)) = known {
            let method = schema::find(&pool, &target.call, source).map_err(TargetError::Setup)?;
            let prepared = target.prepared(method).map_err(TargetError::Setup)?;
            let _ = target.ready.set(prepared);
        }
        Ok(target)
    }

    /// The call is the Greeter's (its descriptors are built in).
    fn is_greeter(&self) -> bool {
        schema::split_call(&self.call) == schema::split_call(GREETER_CALL)
    }

    /// The header block and message of calls to `method`.
    fn prepared(&self, method: Method) -> Result<Prepared, String> {
        let default = match self.is_greeter() {
            true => GREETER_DATA,
            false => "{}",
        };
        let json = self.data.as_deref().unwrap_or(default);
        let message = GrpcMessage::new(method.input.clone(), json)?;
        let mut headers: Vec<(&str, Vec<u8>)> = vec![
            ("content-type", b"application/grpc".to_vec()),
            ("te", b"trailers".to_vec()),
            ("user-agent", b"poolbench".to_vec()),
        ];
        for (name, value) in &self.metadata {
            headers.push((name, value.as_bytes().to_vec()));
        }
        let block = crate::http2::frame::header_block(
            self.tls.is_some(),
            "POST",
            &self.authority,
            method.path.as_bytes(),
            &headers,
        );
        Ok(Prepared {
            method,
            block: block.into(),
            message,
        })
    }

    /// Connections bound to `sources` in turn (`--source`).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
    }

    async fn handshake(&self) -> Result<H2Wire, RequestError> {
        let tcp = crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        let Some(tls) = &self.tls else {
            return crate::http2::handshake(tcp, self.connect_timeout).await;
        };
        let stream = tls.handshake_tcp(tcp, self.connect_timeout).await?;
        if tls::alpn(&stream) != Some(b"h2") {
            return Err(RequestError::broken(
                ErrorKind::Protocol,
                "not a gRPC server: it did not agree to HTTP/2 by ALPN",
            ));
        }
        crate::http2::handshake(stream, self.connect_timeout).await
    }

    /// The method's descriptors by the server's reflection, on a
    /// connection of the h2 crate (tonic's client needs one).
    async fn reflect(&self) -> Result<Method, RequestError> {
        let tcp = crate::net::tcp_connect(&self.sources, self.addr, self.connect_timeout).await?;
        let h2 = match &self.tls {
            Some(tls) => {
                let stream = tls.handshake_tcp(tcp, self.connect_timeout).await?;
                crate::http2::h2_crate_client::H2Conn::handshake(stream).await?
            }
            None => crate::http2::h2_crate_client::H2Conn::handshake(tcp).await?,
        };
        let (service, _) = schema::split_call(&self.call).map_err(RequestError::protocol)?;
        let work = reflect::service_pool(&h2, &self.origin, service);
        let pool = match tokio::time::timeout(self.connect_timeout * 2, work).await {
            Ok(pool) => pool.map_err(RequestError::protocol)?,
            Err(_) => return Err(RequestError::protocol("reflection timed out")),
        };
        schema::find(&pool, &self.call, "the server's reflection").map_err(RequestError::protocol)
    }
}

/// `-H` lines as gRPC metadata.
fn metadata(lines: &[String]) -> Result<Vec<(String, String)>, TargetError> {
    let mut out = Vec::new();
    for line in lines {
        let (name, value) = crate::request::split_header(line)?;
        if matches!(
            name.as_str(),
            "content-type" | "te" | "content-length" | "connection" | "host"
        ) {
            return Err(TargetError::Setup(format!(
                "header {name} is set by the gRPC client; it cannot be given"
            )));
        }
        out.push((name, value));
    }
    Ok(out)
}

/// `--data` or the contents of `--data-file`.
fn data(g: &GrpcOptions) -> Result<Option<String>, TargetError> {
    match (&g.data, &g.data_file) {
        (Some(_), Some(_)) => Err(TargetError::Setup(
            "--data and --data-file cannot both be given".into(),
        )),
        (Some(d), None) => Ok(Some(d.clone())),
        (None, Some(path)) => std::fs::read_to_string(path).map(Some).map_err(|e| {
            TargetError::Setup(format!("cannot read --data-file {}: {e}", path.display()))
        }),
        (None, None) => Ok(None),
    }
}

impl Connector for GrpcTarget {
    type Conn = GrpcConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<GrpcConn, RequestError> {
        self.handshake().await
    }

    fn is_broken(&self, conn: &mut GrpcConn) -> bool {
        conn.is_broken()
    }

    fn streams(&self, conn: &GrpcConn) -> usize {
        conn.streams()
    }

    fn advertised_streams(&self, conn: &GrpcConn) -> Option<usize> {
        Some(conn.streams())
    }

    fn share(&self, conn: &GrpcConn) -> Option<GrpcConn> {
        Some(conn.share())
    }
}

impl Target for GrpcTarget {
    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        self.tls.as_ref().map(TlsClient::facts)
    }

    /// Finds the method by reflection when no file described it, then
    /// makes one call on a fresh connection: a server without the method
    /// (UNIMPLEMENTED) or one that does not answer gRPC is refused here. A
    /// transport failure is tried once more on a new connection, then
    /// refused too: the run starts only after the method has answered.
    async fn prepare(&self) -> Result<(), RequestError> {
        if self.ready.get().is_none() {
            let method = self.reflect().await?;
            let prepared = self.prepared(method).map_err(RequestError::protocol)?;
            let _ = self.ready.set(prepared);
        }
        let name = &self.ready.get().expect("prepared above").method.name;
        let mut failure = None;
        for _ in 0..2 {
            let mut conn = self.connect().await?;
            match self.send(&mut conn).await {
                Ok(_) => return Ok(()),
                Err(e) if e.code == Some(UNIMPLEMENTED) => {
                    return Err(RequestError::protocol(format!(
                        "the server does not implement {name}: {}",
                        e.message
                    )))
                }
                Err(e) if e.kind == ErrorKind::Protocol => {
                    return Err(RequestError::protocol(format!(
                        "not a gRPC server: {}",
                        e.message
                    )))
                }
                // Another status the method itself gave (e.g. INTERNAL
                // from --fail-rate): it is there.
                Err(e) if e.kind == ErrorKind::Status => return Ok(()),
                Err(e) => failure = Some(e),
            }
        }
        Err(failure.unwrap_or_else(|| RequestError::protocol(format!("no answer from {name}"))))
    }

    async fn send(&self, conn: &mut GrpcConn) -> Result<Reply, RequestError> {
        let Some(p) = self.ready.get() else {
            return Err(RequestError::protocol("the gRPC method is not resolved"));
        };
        let body = p.message.next().map_err(|e| RequestError {
            broken: false,
            ..RequestError::protocol(e)
        })?;
        conn.call(&p.block, Some(body)).await
    }

    fn first_byte(&self, conn: &GrpcConn) -> Option<std::time::Instant> {
        conn.first_byte()
    }
}
