//! `--metrics-listen ADDR`: an HTTP server on a thread of its own serving
//! the Prometheus exposition at `/metrics` while the process runs. It
//! binds before any load (a bad or busy address: exit 2), prints the
//! address it bound on stderr (one line) when it picked the port, reads the engine's [`Live`]
//! view only when scraped, and stops with the process, after
//! `--metrics-linger`.
use crate::metrics_args::MetricsArgs;
use crate::Failure;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use poolbench_engine::Live;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// What the endpoint serves: the exposition now.
pub(crate) type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// A metrics endpoint serving; stopped when dropped.
pub(crate) struct Endpoint {
    linger: Duration,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A run's live view and the endpoint showing it (when asked for).
pub(crate) struct Watch {
    pub(crate) live: Option<Arc<Live>>,
    endpoint: Option<Endpoint>,
}

impl Watch {
    /// With `--metrics-listen`: the endpoint up, showing the runs'
    /// cells (labelled `command` in `poolbench_info`).
    pub(crate) fn start(a: &MetricsArgs, command: &str) -> Result<Watch, Failure> {
        let live = Live::new();
        let info = info(command);
        let view = live.clone();
        let render: Render =
            Arc::new(move || poolbench_report::render_prometheus(&view.snapshot(), &info));
        let endpoint = Endpoint::start(a, render)?;
        Ok(Watch {
            live: endpoint.as_ref().map(|_| live),
            endpoint,
        })
    }

    /// The work is done: linger, then stop.
    pub(crate) fn finish(self) {
        if let Some(e) = self.endpoint {
            e.finish();
        }
    }
}

/// Progress nobody watches but a live view (`tune`'s runs).
pub(crate) struct LiveOnly(pub(crate) Option<Arc<Live>>);

impl poolbench_engine::Events for LiveOnly {
    fn live(&self) -> Option<&Live> {
        self.0.as_deref()
    }
}

/// `poolbench_info`'s labels.
pub(crate) fn info(command: &str) -> Vec<(&'static str, String)> {
    vec![
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("command", command.to_string()),
    ]
}

impl Endpoint {
    /// Bound and serving, or `None` without `--metrics-listen`.
    pub(crate) fn start(a: &MetricsArgs, render: Render) -> Result<Option<Endpoint>, Failure> {
        let Some(addr) = a.metrics_listen else {
            return Ok(None);
        };
        let cannot = |e: std::io::Error| Failure::input(format!("--metrics-listen {addr}: {e}"));
        let listener = std::net::TcpListener::bind(addr).map_err(cannot)?;
        listener.set_nonblocking(true).map_err(cannot)?;
        let bound = listener.local_addr().map_err(cannot)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Failure::runtime)?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("poolbench-metrics".into())
            .spawn(move || runtime.block_on(serve(listener, render, stopped)))
            .map_err(Failure::runtime)?;
        // Port 0: where it went, for whoever must scrape it (one line; a
        // port given is known, and a pod's log stays the JSON alone).
        if addr.port() == 0 {
            eprintln!("metrics: http://{bound}/metrics");
        }
        Ok(Some(Endpoint {
            linger: a.metrics_linger,
            stop: Some(stop),
            thread: Some(thread),
        }))
    }

    /// Serve `--metrics-linger` longer (a stop request ends it), then stop.
    pub(crate) fn finish(self) {
        let until = Instant::now() + self.linger;
        while Instant::now() < until && crate::signals::exit_code().is_none() {
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accept until stopped; each connection served on its own task.
async fn serve(listener: std::net::TcpListener, render: Render, mut stop: oneshot::Receiver<()>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, say: try again shortly.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let render = render.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let render = render.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&req, &render)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `GET /metrics`: the exposition; anything else: 404 (405 for another
/// method on `/metrics`).
fn answer<B>(req: &Request<B>, render: &Render) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, body: String, kind: &str| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        if let Ok(v) = kind.parse() {
            r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
        }
        r
    };
    match (req.method(), req.uri().path()) {
        (&hyper::Method::GET, "/metrics") => reply(
            StatusCode::OK,
            render(),
            poolbench_report::EXPOSITION_CONTENT_TYPE,
        ),
        (_, "/metrics") => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "GET only\n".into(),
            "text/plain",
        ),
        _ => reply(
            StatusCode::NOT_FOUND,
            "metrics are at /metrics\n".into(),
            "text/plain",
        ),
    }
}
