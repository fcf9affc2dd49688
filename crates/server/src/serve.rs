//! The accept loop and the per-connection task.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{self, JoinSet};

use crate::authors::Authors;
use crate::config::ServerConfig;
use crate::service::{ConnService, ConnState, Shared};
use crate::stats::{ConnectionGuard, Stats};

/// Pause after an accept error such as EMFILE before accepting again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// How long open connections may take to finish after shutdown before they are cut.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves HTTP/1.1 and h2c (prior knowledge) on `listener` until `shutdown`
/// resolves. Runs on the caller's runtime.
///
/// On shutdown the listener is closed at once, every open connection is shut
/// down gracefully (in-flight requests finish), and connections still open
/// after a 5 s grace period are cut. Fails only if `config` is invalid
/// (`InvalidInput`); accept errors are retried after a 10 ms pause.
pub async fn serve(
    listener: TcpListener,
    config: ServerConfig,
    stats: Arc<Stats>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    serve_service(listener, config, stats, None, shutdown).await
}

/// [`serve`], plus service mode: `GET /authors/{id}` answered by `authors`
/// (other paths as usual), its pool's counters in the stats.
pub async fn serve_service(
    listener: TcpListener,
    config: ServerConfig,
    stats: Arc<Stats>,
    authors: Option<Arc<Authors>>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    config
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let shared = Arc::new(Shared::new(&config, stats, authors));
    let mut builder = Builder::new(TokioExecutor::new());
    if config.batching {
        // Answers to pipelined requests leave in one write.
        builder.http1().pipeline_flush(true);
    }
    let builder = Arc::new(builder);
    let mut tasks = JoinSet::new();
    // One stop sender per open connection; dropping it asks that connection to close.
    let mut stops: HashMap<task::Id, oneshot::Sender<()>> = HashMap::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
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
                    let conn = connection(stream, Arc::clone(&builder), Arc::clone(&shared), stop_rx, guard);
                    let handle = tasks.spawn(conn);
                    stops.insert(handle.id(), stop_tx);
                }
                Err(err) if is_per_connection(&err) => {}
                Err(_) => tokio::select! {
                    biased;
                    () = &mut shutdown => break,
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
    Ok(())
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
async fn connection(
    stream: TcpStream,
    builder: Arc<Builder<TokioExecutor>>,
    shared: Arc<Shared>,
    mut stop: oneshot::Receiver<()>,
    _guard: ConnectionGuard,
) {
    let state = Arc::new(ConnState::new(shared));
    let idle = state.shared.idle_timeout;
    let limited = state.shared.max_requests.is_some();
    let conn = builder.serve_connection(TokioIo::new(stream), ConnService(Arc::clone(&state)));
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
    let mut closing = false;
    loop {
        tokio::select! {
            biased;
            _ = conn.as_mut() => break,
            () = &mut limit_hit, if limited && !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            () = &mut timer, if idle.is_some() && !closing => {
                match idle.and_then(|timeout| state.idle_deadline(timeout)) {
                    Some(deadline) => timer.as_mut().reset(deadline.into()),
                    None => {
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                    }
                }
            }
            _ = &mut stop, if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
}
