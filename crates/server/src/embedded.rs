//! The built-in server on its own runtime, for `poolbench bench` without a URL.

use std::io;
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::config::ServerConfig;
use crate::counters::Counters;
use crate::serve::{serve_all, BoundAddrs, Listeners};

/// The built-in server on its own multi-thread runtime, started on a
/// background thread. Dropping it (or [`EmbeddedServer::shutdown`]) stops the
/// server and its runtime and joins the thread.
#[derive(Debug)]
pub struct EmbeddedServer {
    addrs: BoundAddrs,
    certificate_pem: Option<String>,
    stats: Arc<Counters>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Binds `config.listen`, and `tls_listen` and `grpc_listen` when set
    /// (port 0 picks a free port), and starts serving on
    /// a runtime with `worker_threads` threads (at least 1). Invalid
    /// configurations, bind and runtime errors are returned.
    pub fn start(config: ServerConfig, worker_threads: usize) -> io::Result<EmbeddedServer> {
        config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let stats = Arc::new(Counters::new());
        type Ready = io::Result<(BoundAddrs, Option<String>)>;
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Ready>(1);
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
                    let bound = Listeners::bind(&config).await.and_then(|listeners| {
                        let pem = listeners.certificate_pem().map(str::to_string);
                        Ok((listeners.addrs()?, pem, listeners))
                    });
                    let listeners = match bound {
                        Ok((addrs, pem, listeners)) => {
                            let _ = ready_tx.send(Ok((addrs, pem)));
                            listeners
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
                    let server =
                        tokio::spawn(serve_all(listeners, config, server_stats, None, stopped));
                    let _ = server.await;
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        match ready_rx.recv() {
            Ok(Ok((addrs, certificate_pem))) => Ok(EmbeddedServer {
                addrs,
                certificate_pem,
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
        self.addrs.http
    }

    /// Every bound address: HTTP, and TLS and gRPC when configured.
    pub fn addrs(&self) -> BoundAddrs {
        self.addrs
    }

    /// The TLS listener's certificate (PEM), when it has one.
    pub fn certificate_pem(&self) -> Option<&str> {
        self.certificate_pem.as_deref()
    }

    /// The server's live counters.
    pub fn stats(&self) -> Arc<Counters> {
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
