//! The listeners, their accept loops and the per-connection task.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use poolbench_greeter::GreeterServer;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::{self, JoinSet};
use tokio_rustls::TlsAcceptor;

use crate::authors::Authors;
use crate::config::ServerConfig;
use crate::counters::{ConnectionGuard, Counters};
use crate::grpc::GreeterService;
use crate::service::{ConnService, ConnState, GreeterRoute};
use crate::shared::Shared;
use crate::tls::{self, TlsSetup};
use crate::watch::Ending;

/// Pause after an accept error such as EMFILE before accepting again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// How long open connections may take to finish after shutdown before they are cut.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A TLS handshake that takes longer is abandoned.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The bound sockets of one server, and its TLS setup: everything that can
/// fail on bad input is done here, before serving.
pub struct Listeners {
    http: TcpListener,
    tls: Option<(TcpListener, TlsSetup)>,
    grpc: Option<TcpListener>,
}

/// Where each listener of a server is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundAddrs {
    /// HTTP/1.1 and h2c.
    pub http: SocketAddr,
    /// TLS (HTTP/1.1 or HTTP/2 by ALPN, and the Greeter), if configured.
    pub tls: Option<SocketAddr>,
    /// The gRPC Greeter over h2c, if configured.
    pub grpc: Option<SocketAddr>,
}

impl Listeners {
    /// Binds `listen`, and `tls_listen` and `grpc_listen` when set, and builds
    /// the TLS certificate. Errors are one line naming the address or file.
    pub async fn bind(config: &ServerConfig) -> io::Result<Listeners> {
        config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let http = bind(config.listen).await?;
        let tls = match config.tls_listen {
            Some(addr) => Some((bind(addr).await?, tls::setup(config)?)),
            None => None,
        };
        let grpc = match config.grpc_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        Ok(Listeners { http, tls, grpc })
    }

    /// Only the HTTP/1.1 and h2c listener.
    pub fn http_only(listener: TcpListener) -> Listeners {
        Listeners {
            http: listener,
            tls: None,
            grpc: None,
        }
    }

    /// The bound addresses (real ports when port 0 was asked).
    pub fn addrs(&self) -> io::Result<BoundAddrs> {
        Ok(BoundAddrs {
            http: self.http.local_addr()?,
            tls: self.tls.as_ref().map(|(l, _)| l.local_addr()).transpose()?,
            grpc: self.grpc.as_ref().map(|l| l.local_addr()).transpose()?,
        })
    }

    /// The TLS listener's certificate (PEM), for clients that must trust it.
    pub fn certificate_pem(&self) -> Option<&str> {
        self.tls.as_ref().map(|(_, t)| t.certificate_pem.as_str())
    }
}

/// Connections the kernel may hold for accept: thousands of clients
/// connect at once at the start of a cell, and with tokio's default (1,024)
/// the rest lose their SYN and retry a second later. The kernel caps it at
/// `net.core.somaxconn`.
const BACKLOG: u32 = 65_535;

async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let listen = || -> io::Result<TcpListener> {
        let socket = match addr {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(BACKLOG)
    };
    listen().map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))
}

/// Serves HTTP/1.1 and h2c (prior knowledge) on `listener` until `shutdown`
/// resolves. Runs on the caller's runtime. Same as [`serve_all`] with
/// [`Listeners::http_only`].
pub async fn serve(
    listener: TcpListener,
    config: ServerConfig,
    stats: Arc<Counters>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    serve_service(listener, config, stats, None, shutdown).await
}

/// [`serve`], plus service mode: `GET /authors/{id}` answered by `authors`
/// (other paths as usual), its pool's counters in the stats.
pub async fn serve_service(
    listener: TcpListener,
    config: ServerConfig,
    stats: Arc<Counters>,
    authors: Option<Arc<Authors>>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    serve_all(
        Listeners::http_only(listener),
        config,
        stats,
        authors,
        shutdown,
    )
    .await
}

/// Serves every listener until `shutdown` resolves, on the caller's runtime:
/// HTTP/1.1 and h2c (and service mode with `authors`); TLS with ALPN
/// (HTTP/1.1 or HTTP/2, and the Greeter for gRPC requests); the gRPC Greeter
/// over h2c. On the plain HTTP listener a gRPC request is answered
/// UNIMPLEMENTED.
///
/// On shutdown the listeners are closed at once, every open connection is
/// shut down gracefully (in-flight requests finish), and connections still
/// open after a 5 s grace period are cut. Fails only if `config` is invalid
/// (`InvalidInput`); accept errors are retried after a 10 ms pause.
pub async fn serve_all(
    listeners: Listeners,
    config: ServerConfig,
    stats: Arc<Counters>,
    authors: Option<Arc<Authors>>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    config
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let shared = Arc::new(Shared::new(&config, stats, authors));
    let greeter = GreeterServer::new(GreeterService {
        shared: Arc::clone(&shared),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut loops = JoinSet::new();
    let mut http_builder = builder(&config);
    if config.http1_only {
        http_builder = http_builder.http1_only();
    }
    let http = Face {
        builder: http_builder,
        tls: None,
        greeter: None,
    };
    loops.spawn(accept_loop(
        listeners.http,
        Arc::new(http),
        Arc::clone(&shared),
        stop_rx.clone(),
    ));
    if let Some((listener, setup)) = listeners.tls {
        let face = Face {
            builder: builder(&config),
            tls: Some(TlsAcceptor::from(setup.config)),
            greeter: Some(greeter.clone()),
        };
        loops.spawn(accept_loop(
            listener,
            Arc::new(face),
            Arc::clone(&shared),
            stop_rx.clone(),
        ));
    }
    if let Some(listener) = listeners.grpc {
        let face = Face {
            builder: builder(&config),
            tls: None,
            greeter: Some(greeter),
        };
        loops.spawn(accept_loop(
            listener,
            Arc::new(face),
            Arc::clone(&shared),
            stop_rx.clone(),
        ));
    }
    drop(stop_rx);
    shutdown.await;
    let _ = stop_tx.send(true);
    while loops.join_next().await.is_some() {}
    Ok(())
}

/// What one listener speaks.
struct Face {
    builder: Builder<TokioExecutor>,
    tls: Option<TlsAcceptor>,
    greeter: Option<GreeterRoute>,
}

/// HTTP/1.1 and HTTP/2 on every listener: gRPC clients speak HTTP/2, and
/// the stats endpoint answers HTTP/1.1 everywhere.
fn builder(config: &ServerConfig) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    if config.batching {
        // Answers to pipelined requests leave in one write.
        builder.http1().pipeline_flush(true);
    }
    if let Some(streams) = config.max_concurrent_streams {
        builder.http2().max_concurrent_streams(streams);
    }
    builder
}

/// Accepts on one listener until `stop` turns true, then drains its connections.
async fn accept_loop(
    listener: TcpListener,
    face: Arc<Face>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    // One stop sender per open connection; dropping it asks that connection to close.
    let mut stops: HashMap<task::Id, oneshot::Sender<()>> = HashMap::new();
    let stopped = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            biased;
            () = &mut stopped => break,
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(err) => err.id(),
                };
                stops.remove(&id);
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Best effort: a socket that refuses it is still served.
                    let _ = stream.set_nodelay(true);
                    let guard = ConnectionGuard::new(Arc::clone(&shared.stats));
                    let (stop_tx, stop_rx) = oneshot::channel();
                    let state = Arc::new(ConnState::new(Arc::clone(&shared), face.greeter.clone()));
                    let face = Arc::clone(&face);
                    let handle = tasks.spawn(async move {
                        let _guard = guard;
                        match &face.tls {
                            None => connection(stream, &face.builder, state, stop_rx).await,
                            Some(acceptor) => {
                                let mut stop_rx = stop_rx;
                                let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                                let tls = tokio::select! {
                                    done = handshake => match done {
                                        Ok(Ok(tls)) => tls,
                                        _ => return,
                                    },
                                    _ = &mut stop_rx => return,
                                };
                                let resumed = tls.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                                state.shared.stats.tls_handshake(resumed);
                                connection(tls, &face.builder, state, stop_rx).await;
                            }
                        }
                    });
                    stops.insert(handle.id(), stop_tx);
                }
                Err(err) if is_per_connection(&err) => {}
                Err(_) => tokio::select! {
                    biased;
                    () = &mut stopped => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                },
            },
        }
    }
    drop(listener);
    drop(stops);
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, drain).await.is_err() {
        tasks.shutdown().await;
    }
}

/// Errors that concern one half-accepted connection, not the listener.
fn is_per_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Serves one connection until it ends; closes it gracefully when it has been
/// idle for `keepalive_timeout`, when HTTP/2 reaches `max_requests_per_conn`,
/// or when the server stops.
async fn connection<I>(
    io: I,
    builder: &Builder<TokioExecutor>,
    state: Arc<ConnState>,
    mut stop: oneshot::Receiver<()>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let idle = state.shared.idle_timeout;
    let limited = state.shared.max_requests.is_some();
    let conn = builder.serve_connection(TokioIo::new(io), ConnService(Arc::clone(&state)));
    tokio::pin!(conn);
    // Only polled when enabled, so a disabled timer is never registered.
    let timer = tokio::time::sleep(idle.unwrap_or(Duration::MAX));
    tokio::pin!(timer);
    // The flag is only ever set by the service inside `conn`'s poll, and this
    // branch is polled right after it (biased select), so no waker is needed.
    let limit_hit = poll_fn(|_| match state.limit_reached.load(Relaxed) {
        true => Poll::Ready(()),
        false => Poll::Pending,
    });
    tokio::pin!(limit_hit);
    // Who closes it, once the server begins to.
    let mut closing: Option<Ending> = None;
    let ended = loop {
        tokio::select! {
            biased;
            done = conn.as_mut() => break done,
            () = &mut limit_hit, if limited && closing.is_none() => {
                conn.as_mut().graceful_shutdown();
                closing = Some(Ending::ServerLimit);
            }
            () = &mut timer, if idle.is_some() && closing.is_none() => {
                match idle.and_then(|timeout| state.idle_deadline(timeout)) {
                    Some(deadline) => timer.as_mut().reset(deadline.into()),
                    None => {
                        conn.as_mut().graceful_shutdown();
                        closing = Some(Ending::ServerIdle);
                    }
                }
            }
            _ = &mut stop, if closing.is_none() => {
                conn.as_mut().graceful_shutdown();
                closing = Some(Ending::ServerStop);
            }
        }
    };
    if let (Some(w), Some(rec)) = (state.shared.stats.watch(), &state.rec) {
        let how = match (closing, ended.is_ok()) {
            (Some(by), _) => by,
            (None, true) => Ending::Client,
            (None, false) => Ending::Reset,
        };
        w.closed(rec, how);
    }
}
