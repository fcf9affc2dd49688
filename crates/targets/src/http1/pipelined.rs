//! HTTP/1.1 pipelining (`pipeline:NxD`): up to D requests written ahead of
//! their answers on one connection, the answers matched to the requests in
//! order. Two tasks drive each connection: the writer takes the requests
//! of every handle (several at once go out in one write) and the reader
//! parses the answers with the same code as a plain connection
//! ([`Http1Conn::read_answer`]). The window of D is the pool's: each slot's
//! semaphore holds D streams ([`poolbench_pool::Connector::streams`]).
//!
//! Head-of-line blocking is measured per request: the time from its write
//! until the answer before it was whole, which it spent behind that answer
//! whatever its own took at the server.
use crate::http1::wire::{Http1Conn, ReadHalf};
use crate::{ErrorKind, Reply, RequestError};
use bytes::Bytes;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

/// Most bytes of requests gathered into one write.
const MOST_GATHERED: usize = 64 * 1024;

/// What one pipelined connection has seen, shared by its handles and tasks.
#[derive(Debug, Default)]
pub struct PipeState {
    /// The connection closed or failed: no handle may send on it.
    broken: AtomicBool,
}

/// A handle to a pipelined connection; each lease holds its own, so what
/// the last answer took is the lease's.
pub struct H1Pipe {
    jobs: mpsc::UnboundedSender<Job>,
    state: Arc<PipeState>,
    depth: usize,
    first_byte: Option<Instant>,
    behind: Option<Duration>,
}

struct Job {
    request: Bytes,
    bodiless: bool,
    answer: oneshot::Sender<Answer>,
}

/// A request written, waiting for its answer.
struct Pending {
    bodiless: bool,
    written: Instant,
    answer: oneshot::Sender<Answer>,
}

struct Answer {
    reply: Result<Reply, RequestError>,
    first_byte: Option<Instant>,
    behind: Duration,
}

impl H1Pipe {
    /// Drive `stream` as a pipelined connection of `depth` (its two tasks
    /// on the current runtime; they end when every handle is dropped).
    pub(crate) fn start(stream: TcpStream, depth: usize) -> H1Pipe {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let (jobs, job_rx) = mpsc::unbounded_channel();
        let (pending, pending_rx) = mpsc::unbounded_channel();
        let state = Arc::new(PipeState::default());
        tokio::spawn(write_loop(write, job_rx, pending, state.clone(), depth));
        let reader = Http1Conn::new(ReadHalf(read));
        tokio::spawn(read_loop(reader, pending_rx, state.clone()));
        H1Pipe {
            jobs,
            state,
            depth,
            first_byte: None,
            behind: None,
        }
    }

    /// Requests this connection carries at once.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.state.broken.load(Relaxed) || self.jobs.is_closed()
    }

    /// Another handle to the same connection.
    pub(crate) fn share(&self) -> H1Pipe {
        H1Pipe {
            jobs: self.jobs.clone(),
            state: self.state.clone(),
            depth: self.depth,
            first_byte: None,
            behind: None,
        }
    }

    /// When the last answer began to arrive, if a read brought it.
    pub(crate) fn first_byte(&self) -> Option<Instant> {
        self.first_byte
    }

    /// How long the last request waited behind the answer before it.
    pub(crate) fn behind(&self) -> Option<Duration> {
        self.behind
    }

    /// Write `request` behind those already written and wait for its answer.
    pub(crate) async fn exchange(
        &mut self,
        request: Bytes,
        bodiless: bool,
    ) -> Result<Reply, RequestError> {
        self.first_byte = None;
        self.behind = None;
        if self.state.broken.load(Relaxed) {
            return Err(RequestError::unsent(
                "pipelined connection closed before the request",
            ));
        }
        let (answer, rx) = oneshot::channel();
        let job = Job {
            request,
            bodiless,
            answer,
        };
        if self.jobs.send(job).is_err() {
            return Err(RequestError::unsent(
                "pipelined connection closed before the request",
            ));
        }
        match rx.await {
            Ok(a) => {
                self.first_byte = a.first_byte;
                self.behind = Some(a.behind);
                a.reply
            }
            Err(_) => Err(RequestError::broken(
                ErrorKind::Reset,
                "pipelined connection closed before the answer",
            )),
        }
    }
}

/// Write each job's request, several at once when several wait; a job
/// goes to the reader before its bytes go out, so its answer finds it.
async fn write_loop(
    mut io: OwnedWriteHalf,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    pending: mpsc::UnboundedSender<Pending>,
    state: Arc<PipeState>,
    depth: usize,
) {
    let mut out = Vec::new();
    while let Some(first) = jobs.recv().await {
        if depth > 1 {
            // The answers of a read wake their workers together, and the
            // first worker's job wakes this task at once (the runtime runs a
            // task woken by the running one next): without stepping back
            // here every request went out in a write of its own. Behind the
            // others, the jobs of a batch of answers go out in one write.
            tokio::task::yield_now().await;
        }
        out.clear();
        let mut next = Some(first);
        while let Some(job) = next.take() {
            if state.broken.load(Relaxed) {
                let _ = job.answer.send(unsent());
            } else {
                out.extend_from_slice(&job.request);
                let p = Pending {
                    bodiless: job.bodiless,
                    written: Instant::now(),
                    answer: job.answer,
                };
                if let Err(mpsc::error::SendError(p)) = pending.send(p) {
                    let _ = p.answer.send(unsent());
                }
            }
            if out.len() < MOST_GATHERED {
                next = jobs.try_recv().ok();
            }
        }
        if out.is_empty() {
            continue;
        }
        if io.write_all(&out).await.is_err() {
            // The reader fails what it holds when the stream ends.
            state.broken.store(true, Relaxed);
            break;
        }
    }
    // Every handle gone (or the stream failed): the write side closes.
    let _ = io.shutdown().await;
}

/// Read the answers in the order of their requests.
async fn read_loop(
    mut conn: Http1Conn<ReadHalf>,
    mut pending: mpsc::UnboundedReceiver<Pending>,
    state: Arc<PipeState>,
) {
    let mut last_done: Option<Instant> = None;
    while let Some(p) = pending.recv().await {
        let reply = conn.read_answer(p.bodiless).await;
        let done = Instant::now();
        let behind = last_done.map_or(Duration::ZERO, |d| d.saturating_duration_since(p.written));
        last_done = Some(done);
        let ends = reply.is_err() || conn.closes();
        let _ = p.answer.send(Answer {
            reply,
            first_byte: conn.first_byte(),
            behind,
        });
        if ends {
            state.broken.store(true, Relaxed);
            break;
        }
    }
    // The rest were written (or about to be) on a connection that ended:
    // they are failed, not left waiting.
    pending.close();
    while let Some(p) = pending.recv().await {
        let _ = p.answer.send(Answer {
            reply: Err(RequestError::broken(
                ErrorKind::Reset,
                "pipelined connection closed before the answer (an earlier answer ended it)",
            )),
            first_byte: None,
            behind: Duration::ZERO,
        });
    }
}

fn unsent() -> Answer {
    Answer {
        reply: Err(RequestError::unsent(
            "pipelined connection closed before the request",
        )),
        first_byte: None,
        behind: Duration::ZERO,
    }
}
