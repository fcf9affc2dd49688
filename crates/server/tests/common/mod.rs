//! Helpers shared by the integration tests: a server on 127.0.0.1:0 and hyper clients.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use poolbench_server::{serve, CounterValues, Counters, ServerConfig};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Upper bound for any single test body.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(20);

pub async fn within<F: Future>(fut: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, fut)
        .await
        .expect("test timed out")
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub stats: Arc<Counters>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

pub async fn start(config: ServerConfig) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stats = Arc::new(Counters::new());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, config, Arc::clone(&stats), async {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        stats,
        stop: Some(stop),
        task,
    }
}

impl TestServer {
    pub fn snapshot(&self) -> CounterValues {
        self.stats.snapshot()
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        (&mut self.task).await.unwrap().unwrap();
    }

    /// Waits until `cond` holds for the stats (polling), or panics after 3 s.
    pub async fn wait_for(&self, what: &str, cond: impl Fn(&CounterValues) -> bool) {
        for _ in 0..300 {
            if cond(&self.snapshot()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("stats never reached {what}: {:?}", self.snapshot());
    }
}

pub type H1 = http1::SendRequest<Empty<Bytes>>;
pub type H2 = http2::SendRequest<Empty<Bytes>>;

/// An HTTP/1.1 client connection; the handle resolves when the connection ends.
pub async fn h1(addr: SocketAddr) -> (H1, JoinHandle<hyper::Result<()>>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    (sender, tokio::spawn(conn))
}

/// An h2c (prior knowledge) client connection.
pub async fn h2(addr: SocketAddr) -> (H2, JoinHandle<hyper::Result<()>>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .unwrap();
    (sender, tokio::spawn(conn))
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub version: http::Version,
    pub body: Bytes,
}

fn build(method: Method, uri: String) -> Request<Empty<Bytes>> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1")
        .body(Empty::new())
        .unwrap()
}

async fn collect(resp: http::Response<hyper::body::Incoming>) -> Reply {
    let (parts, body) = resp.into_parts();
    Reply {
        status: parts.status,
        headers: parts.headers,
        version: parts.version,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

pub async fn send1(client: &mut H1, method: Method, path: &str) -> Reply {
    client.ready().await.unwrap();
    let resp = client.send_request(build(method, path.to_string())).await;
    collect(resp.unwrap()).await
}

pub async fn get1(client: &mut H1, path: &str) -> Reply {
    send1(client, Method::GET, path).await
}

pub async fn get2(client: &mut H2, addr: SocketAddr, path: &str) -> Reply {
    client.ready().await.unwrap();
    let resp = client.send_request(build(Method::GET, format!("http://{addr}{path}")));
    collect(resp.await.unwrap()).await
}

/// Counters over HTTP, on the given connection.
pub async fn stats_over(client: &mut H1) -> CounterValues {
    let reply = get1(client, "/_poolbench/stats").await;
    assert_eq!(reply.status, StatusCode::OK);
    serde_json::from_slice(&reply.body).unwrap()
}
