//! The per-connection hyper service: the request hot path and the admin endpoints.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use http::{Request, Response, StatusCode, Version};
use http_body_util::{BodyExt as _, Either, Full};
use hyper::body::{Body as _, Incoming};
use poolbench_greeter::GreeterServer;
use tower_service::Service as _;

use crate::admin::{admin, ADMIN_PREFIX};
use crate::authors::{self, Authors};
use crate::grpc::GreeterService;
use crate::response::{Resp, TEXT_PLAIN};
use crate::shared::{spin_and_toss, Processing, Shared};
use crate::watch::ConnRec;

const FAIL_BODY: &[u8] = b"injected failure (fail_rate)\n";
const CLOSE: HeaderValue = HeaderValue::from_static("close");

/// The response body of any request: plain HTTP or gRPC.
pub(crate) type AnyBody = Either<Full<Bytes>, tonic::body::Body>;

/// The Greeter as a tower service of `http` requests.
pub(crate) type GreeterRoute = GreeterServer<GreeterService>;

/// Per-connection state, shared by the connection task and its requests.
pub(crate) struct ConnState {
    pub(crate) shared: Arc<Shared>,
    /// The Greeter, on listeners that answer gRPC; elsewhere gRPC requests
    /// get UNIMPLEMENTED.
    greeter: Option<GreeterRoute>,
    /// HTTP/2 requests of this connection in flight (its open streams).
    h2_streams: AtomicU64,
    born: Instant,
    /// Requests of this connection not yet answered (idle tracking only).
    inflight: AtomicU64,
    /// Nanoseconds after `born` when the last request finished (idle tracking only).
    last_done: AtomicU64,
    /// Counted requests (only with `max_requests_per_conn`).
    requests: AtomicU64,
    /// Set (during the connection's own poll) when the request limit is hit.
    pub(crate) limit_reached: AtomicBool,
    /// `serve --check-client`: this connection, watched.
    pub(crate) rec: Option<Arc<ConnRec>>,
}

impl ConnState {
    pub(crate) fn new(shared: Arc<Shared>, greeter: Option<GreeterRoute>) -> ConnState {
        let rec = shared.stats.watch().map(|w| w.opened());
        ConnState {
            rec,
            shared,
            greeter,
            h2_streams: AtomicU64::new(0),
            born: Instant::now(),
            inflight: AtomicU64::new(0),
            last_done: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            limit_reached: AtomicBool::new(false),
        }
    }

    fn touch(&self) {
        let nanos = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_done.fetch_max(nanos, Relaxed);
    }

    /// When the connection becomes idle-expired: `None` if it already is.
    pub(crate) fn idle_deadline(&self, timeout: Duration) -> Option<Instant> {
        let now = Instant::now();
        if self.inflight.load(Relaxed) > 0 {
            return Some(now + timeout);
        }
        let deadline = self.born + Duration::from_nanos(self.last_done.load(Relaxed)) + timeout;
        (deadline > now).then_some(deadline)
    }
}

/// Marks a request of a connection as in flight until dropped; on HTTP/2
/// it also counts as an open stream.
pub(crate) struct RequestGuard(Arc<ConnState>, bool);

impl RequestGuard {
    fn new(conn: &Arc<ConnState>, h2: bool) -> RequestGuard {
        if conn.shared.idle_timeout.is_some() {
            conn.inflight.fetch_add(1, Relaxed);
        }
        if h2 {
            let open = conn.h2_streams.fetch_add(1, Relaxed) + 1;
            conn.shared.stats.h2_streams_open(open);
        }
        if let (Some(w), Some(rec)) = (conn.shared.stats.watch(), &conn.rec) {
            w.request_started(rec, h2);
        }
        RequestGuard(Arc::clone(conn), h2)
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if self.0.shared.idle_timeout.is_some() {
            self.0.touch();
            self.0.inflight.fetch_sub(1, Relaxed);
        }
        if self.1 {
            self.0.h2_streams.fetch_sub(1, Relaxed);
        }
        if let (Some(w), Some(rec)) = (self.0.shared.stats.watch(), &self.0.rec) {
            w.request_done(rec, self.1);
        }
    }
}

/// The hyper service of one connection.
#[derive(Clone)]
pub(crate) struct ConnService(pub(crate) Arc<ConnState>);

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<AnyBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: Request<Incoming>) -> ResponseFuture {
        let conn = &self.0;
        let shared = &conn.shared;
        if req.uri().path().starts_with(ADMIN_PREFIX) {
            if shared.idle_timeout.is_some() {
                conn.touch();
            }
            return ResponseFuture::Ready(Some(admin(
                &req,
                &shared.stats,
                shared.authors.as_deref(),
            )));
        }
        let grpc = is_grpc(&req);
        if grpc && conn.greeter.is_none() {
            let status = tonic::Status::unimplemented(NO_GREETER);
            return ResponseFuture::Ready(Some(status.into_http()));
        }
        if !grpc {
            // The Greeter counts its own requests.
            shared.stats.request_received();
        }
        if let (false, Some(authors)) = (grpc, &shared.authors) {
            if req.uri().path().starts_with(authors::PREFIX) {
                return authors_answer(conn, Arc::clone(authors), &req);
            }
        }
        let mut close = false;
        if let Some(max) = shared.max_requests {
            if conn.requests.fetch_add(1, Relaxed) + 1 >= max {
                // HTTP/1.1 closes after this response; HTTP/2 is shut down
                // gracefully by the connection task, which polls this flag
                // right after the poll that made this call.
                close = req.version() != Version::HTTP_2;
                conn.limit_reached.store(true, Relaxed);
            }
        }
        let guard = RequestGuard::new(conn, req.version() == Version::HTTP_2);
        if let (true, Some(greeter)) = (grpc, &conn.greeter) {
            let mut greeter = greeter.clone();
            return ResponseFuture::Grpc(Box::pin(async move {
                let _guard = guard;
                let resp = match greeter.call(req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                };
                resp.map(Either::Right)
            }));
        }
        // A request body is read whole before the answer, as servers that
        // parse it do: answered first, an HTTP/2 upload would be reset
        // mid-body and its DATA already on the wire would arrive for a
        // closed stream.
        let body = (!req.body().is_end_stream()).then(|| req.into_body());
        if body.is_none()
            && shared.semaphore.is_none()
            && shared.sampler.is_none()
            && shared.stall.is_none()
        {
            return ResponseFuture::Immediate(Some((guard, close)));
        }
        slow_answer(guard, close, body)
    }
}

/// Service mode: `/authors/{id}` from the database (and cache).
fn authors_answer(
    conn: &Arc<ConnState>,
    authors: Arc<Authors>,
    req: &Request<Incoming>,
) -> ResponseFuture {
    let guard = RequestGuard::new(conn, req.version() == Version::HTTP_2);
    let path = req.uri().path().to_string();
    let received = Instant::now();
    ResponseFuture::Slow(Box::pin(async move {
        let stats = &guard.0.shared.stats;
        let _processing = Processing::new(stats);
        let resp = authors.get(&path).await;
        stats.served(received.elapsed());
        resp
    }))
}

/// A request that waits first: for its body, an in-flight permit, its
/// sampled delay, a stall under way.
fn slow_answer(guard: RequestGuard, close: bool, body: Option<Incoming>) -> ResponseFuture {
    let shared = &guard.0.shared;
    let delay = shared.sampler.sample(&mut rand::rng());
    let received = Instant::now();
    ResponseFuture::Slow(Box::pin(async move {
        if let Some(mut body) = body {
            // A body cut short is the client's doing: answer what came.
            while let Some(Ok(_)) = body.frame().await {}
        }
        let shared = &guard.0.shared;
        let _permit = match &shared.semaphore {
            Some(sem) => Some(sem.acquire().await.expect("the semaphore is never closed")),
            None => None,
        };
        let _processing = Processing::new(&shared.stats);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let resp = process(shared, close);
        if let Some(until) = shared.stalled_until(Instant::now()) {
            tokio::time::sleep_until(until.into()).await;
        }
        shared.stats.served(received.elapsed());
        resp
    }))
}

/// The end of a request's processing: cpu spin, then the fail coin, then the
/// response. The caller holds the request's [`Processing`] gauge.
fn process(shared: &Shared, close: bool) -> Resp {
    let mut resp = if spin_and_toss(shared) {
        let mut resp = Response::new(Full::new(Bytes::from_static(FAIL_BODY)));
        *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        resp
    } else {
        Response::new(Full::new(shared.body.clone()))
    };
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, TEXT_PLAIN);
    if close {
        headers.insert(CONNECTION, CLOSE);
    }
    resp
}

/// What a gRPC request to a listener without the Greeter is told.
const NO_GREETER: &str =
    "no gRPC service on this listener (the Greeter is on --grpc-listen and --tls-listen)";

/// A gRPC request: `content-type: application/grpc` or `application/grpc+proto`.
fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// The future of one request: no allocation unless a delay or limit applies.
pub(crate) enum ResponseFuture {
    /// Already answered (admin endpoints).
    Ready(Option<Resp>),
    /// Processed on first poll (cpu spin and fail coin only).
    Immediate(Option<(RequestGuard, bool)>),
    /// Waits for a permit and/or sleeps first.
    Slow(Pin<Box<dyn Future<Output = Resp> + Send>>),
    /// A gRPC call to the Greeter.
    Grpc(Pin<Box<dyn Future<Output = Response<AnyBody>> + Send>>),
}

impl Future for ResponseFuture {
    type Output = Result<Response<AnyBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        const DONE: &str = "ResponseFuture polled after completion";
        let http = match self.get_mut() {
            ResponseFuture::Ready(resp) => resp.take().expect(DONE),
            ResponseFuture::Immediate(pending) => {
                let (guard, close) = pending.take().expect(DONE);
                let shared = &guard.0.shared;
                let _processing = Processing::new(&shared.stats);
                process(shared, close)
            }
            ResponseFuture::Slow(fut) => match fut.as_mut().poll(cx) {
                Poll::Ready(resp) => resp,
                Poll::Pending => return Poll::Pending,
            },
            ResponseFuture::Grpc(fut) => return fut.as_mut().poll(cx).map(Ok),
        };
        Poll::Ready(Ok(http.map(Either::Left)))
    }
}
