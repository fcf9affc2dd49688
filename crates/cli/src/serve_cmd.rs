use crate::args::ServeArgs;
use crate::Failure;
use poolbench_server::{Authors, DbConfig, ServerConfig, Stats, AUTHORS};
use std::io::Write;
use std::sync::Arc;

pub(crate) fn config(a: &ServeArgs) -> ServerConfig {
    ServerConfig {
        listen: a.listen,
        delay: a.delay,
        cpu: a.cpu,
        body_size: a.body_size,
        max_inflight: a.max_inflight,
        keepalive_timeout: a.keepalive_timeout,
        max_requests_per_conn: a.max_requests_per_conn,
        fail_rate: a.fail_rate,
        stall: a.stall,
        stall_every: a.stall_every,
        batching: a.batching,
    }
}

pub(crate) fn serve(a: ServeArgs) -> Result<(), Failure> {
    let config = config(&a);
    config.validate().map_err(Failure::input)?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = a.threads {
        builder.worker_threads(n);
    }
    let runtime = builder
        .thread_name("poolbench-server-worker")
        .enable_all()
        .build()
        .map_err(Failure::runtime)?;
    runtime.block_on(async move {
        let authors = match &a.db {
            Some(url) => Some(Arc::new(
                Authors::open(DbConfig {
                    url: url.clone(),
                    pool: a.db_pool,
                    overflow: a.db_overflow,
                    timeout: a.db_timeout,
                    delay: a.db_delay,
                    cache: a.cache.clone(),
                    nested: a.nested,
                })
                .await
                .map_err(Failure::input)?,
            )),
            None => None,
        };
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| Failure::input(format!("cannot listen on {}: {e}", config.listen)))?;
        let addr = listener.local_addr().map_err(Failure::runtime)?;
        println!("listening on http://{addr} (HTTP/1.1 and h2c)");
        if let Some(a) = &authors {
            let s = a.stats();
            println!(
                "serving http://{addr}/authors/{{1..{AUTHORS}}} from PostgreSQL, pool {}+{} overflow",
                s.size, s.overflow
            );
        }
        let _ = std::io::stdout().flush();
        poolbench_server::serve_service(
            listener,
            config,
            Arc::new(Stats::new()),
            authors,
            stop_signal(),
        )
            .await
            .map_err(Failure::runtime)
    })
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
