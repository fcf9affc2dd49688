use crate::check_client::Checker;
use crate::serve_args::ServeArgs;
use crate::Failure;
use poolbench_server::{Authors, Counters, DbConfig, Listeners, ServerConfig, AUTHORS};
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
        tls_listen: a.tls_listen,
        tls_cert: a.cert.clone(),
        tls_key: a.key.clone(),
        grpc_listen: a.grpc_listen,
        max_concurrent_streams: a.max_concurrent_streams,
        http1_only: a.http1_only,
    }
}

pub(crate) fn serve(a: ServeArgs) -> Result<(), Failure> {
    // Every client connection is a descriptor here too.
    crate::limits::raise();
    let config = config(&a);
    config.validate().map_err(Failure::input)?;
    let checking = a.check.check_client;
    if checking {
        crate::check_client::check_outputs(&a.check.output)?;
    }
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
            Some(url) => Some(open_authors(&a, url).await?),
            None => None,
        };
        let listeners = Listeners::bind(&config).await.map_err(Failure::input)?;
        let addrs = listeners.addrs().map_err(Failure::runtime)?;
        let stats = Arc::new(match checking {
            true => Counters::watching(
                Some(config.keepalive_timeout).filter(|k| !k.is_zero()),
                u64::from(config.max_concurrent_streams.unwrap_or(HYPER_STREAMS)),
            ),
            false => Counters::new(),
        });
        let checker = checking.then(|| Arc::new(Checker::new(stats.clone(), &a.check, &addrs)));
        let render =
            crate::serve_metrics::renderer(stats.clone(), authors.clone(), checker.clone());
        // Stopped (dropped) when the server is.
        let _metrics = crate::metrics_listen::Endpoint::start(&a.metrics, render)?;
        // One line per listener, first, so scripts can read the ports.
        println!("http {}", addrs.http);
        if let Some(tls) = addrs.tls {
            println!("tls {tls}");
        }
        if let Some(grpc) = addrs.grpc {
            println!("grpc {grpc}");
        }
        if let Some(a) = &authors {
            let s = a.stats();
            println!(
                "serving http://{}/authors/{{1..{AUTHORS}}} from {}, pool {}+{} overflow",
                addrs.http,
                a.database(),
                s.size,
                s.overflow
            );
        }
        let _ = std::io::stdout().flush();
        let Some(checker) = checker else {
            return poolbench_server::serve_all(listeners, config, stats, authors, stop_signal())
                .await
                .map_err(Failure::runtime);
        };
        let served = Served {
            listeners,
            config,
            stats,
            authors,
        };
        serve_checked(served, &a, checker).await
    })
}

/// A server ready to serve.
struct Served {
    listeners: Listeners,
    config: ServerConfig,
    stats: Arc<Counters>,
    authors: Option<Arc<Authors>>,
}

/// `--check-client`: serve until the client has gone, then the verdict.
async fn serve_checked(s: Served, a: &ServeArgs, checker: Arc<Checker>) -> Result<(), Failure> {
    let ended = std::sync::Mutex::new("interrupted");
    let until = async {
        let why = crate::check_client::until_done(&a.check, checker.clone()).await;
        *ended.lock().unwrap_or_else(|p| p.into_inner()) = why;
    };
    poolbench_server::serve_all(s.listeners, s.config, s.stats, s.authors, until)
        .await
        .map_err(Failure::runtime)?;
    let why = *ended.lock().unwrap_or_else(|p| p.into_inner());
    crate::check_client::finish(&a.check, &checker.check(why))
}

async fn open_authors(a: &ServeArgs, url: &str) -> Result<Arc<Authors>, Failure> {
    let authors = Authors::open(DbConfig {
        url: url.to_string(),
        pool: a.db_pool,
        overflow: a.db_overflow,
        timeout: a.db_timeout,
        delay: a.db_delay,
        cache: a.cache.clone(),
        nested: a.nested,
    })
    .await
    .map_err(Failure::input)?;
    Ok(Arc::new(authors))
}

/// The HTTP/2 streams hyper allows per connection unless told.
const HYPER_STREAMS: u32 = 200;

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
