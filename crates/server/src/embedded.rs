//! The built-in server on its own runtime, for `poolbench bench` without a URL.

use std::io;
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::config::ServerConfig;
use crate::serve::serve;
use crate::stats::Stats;

/// The built-in server on its own multi-thread runtime, started on a
/// background thread. Dropping it (or [`EmbeddedServer::shutdown`]) stops the
/// server and its runtime and joins the thread.
#[derive(Debug)]
pub struct EmbeddedServer {
    addr: SocketAddr,
    stats: Arc<Stats>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Binds `config.listen` (port 0 picks a free port) and starts serving on
    /// a runtime with `worker_threads` threads (at least 1). Invalid
    /// configurations, bind and runtime errors are returned.
    pub fn start(config: ServerConfig, worker_threads: usize) -> io::Result<EmbeddedServer> {
        config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let stats = Arc::new(Stats::new());
        let (ready_tx, ready_rx) = mpsc::sync_channel::<io::Result<SocketAddr>>(1);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let server_stats = Arc::clone(&stats);
        let thread = std::thread::Builder::new()
            .name("poolbench-server".to_string())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(worker_threads.max(1))
                    .thread_name("poolbench-server-worker")
                    .enable_all()
                    .build();
                let runtime = match runtime {
                    Ok(runtime) => runtime,
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let bound = TcpListener::bind(config.listen)
                        .await
                        .and_then(|listener| Ok((listener.local_addr()?, listener)));
                    let listener = match bound {
                        Ok((addr, listener)) => {
                            let _ = ready_tx.send(Ok(addr));
                            listener
                        }
                        Err(err) => {
                            let _ = ready_tx.send(Err(err));
                            return;
                        }
                    };
                    let stopped = async {
                        // A dropped sender stops the server too.
                        let _ = stop_rx.await;
                    };
                    // Run the accept loop on a worker, not on this thread.
                    let server = tokio::spawn(serve(listener, config, server_stats, stopped));
                    let _ = server.await;
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        match ready_rx.recv() {
            Ok(Ok(addr)) => Ok(EmbeddedServer {
                addr,
                stats,
                stop: Some(stop_tx),
                thread: Some(thread),
            }),
            Ok(Err(err)) => {
                let _ = thread.join();
                Err(err)
            }
            Err(_) => {
                let _ = thread.join();
                Err(io::Error::other(
                    "the server thread ended before it was ready",
                ))
            }
        }
    }

    /// The bound address (with the real port when `listen` had port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's live counters.
    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// Stops the server (same as dropping it).
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
