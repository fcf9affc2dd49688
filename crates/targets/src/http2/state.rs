//! What the handles of one lean HTTP/2 connection and its driver share,
//! under one lock: the frames queued to write, the open streams and their
//! answers, the peer's limits and windows.
use crate::http2::frame as f;
use crate::RequestError;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::time::Instant;

/// Client-initiated streams one HTTP/2 connection can ever open (odd ids
/// below 2^31): the limit of a peer that sets none.
pub(crate) use poolbench_pool::UNLIMITED_STREAMS;

/// What the handles and the driver share.
pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Closed, failed, or going away: open no more streams on it.
    pub(crate) broken: AtomicBool,
    /// The peer's max concurrent streams.
    pub(crate) streams: AtomicUsize,
    /// Live handles.
    pub(crate) handles: AtomicUsize,
}

/// Request-side state, under the lock.
pub(crate) struct State {
    /// Frames queued for the driver to write.
    pub(crate) out: Vec<u8>,
    /// Wakes the driver (taken by whoever wakes it).
    pub(crate) driver: Option<Waker>,
    pub(crate) next_id: u32,
    pub(crate) open: HashMap<u32, Stream, BuildHasherDefault<IdHasher>>,
    /// The last stream id of the server's GOAWAY.
    pub(crate) goaway: Option<u32>,
    /// Why the connection ended.
    pub(crate) ended: Option<String>,
    /// DATA the server lets this connection send (its connection window).
    pub(crate) send_window: i64,
    /// Each new stream's send window (the server's initial window size).
    pub(crate) initial_window: i64,
    /// The largest DATA frame the server takes.
    pub(crate) max_frame: usize,
    /// Streams with body left to send, oldest first.
    pub(crate) pending: VecDeque<u32>,
    /// SETTINGS_MAX_CONCURRENT_STREAMS as the server set it (0 allowed:
    /// no new stream until it raises it).
    pub(crate) max_streams: usize,
    /// Requests waiting for a stream below that limit.
    pub(crate) capacity: Vec<Waker>,
}

impl State {
    /// Wakes the requests waiting for a stream (one closed, the limit
    /// rose, or the connection ended).
    pub(crate) fn wake_capacity(&mut self) {
        self.capacity.drain(..).for_each(Waker::wake);
    }
}

/// One request's answer as it arrives.
#[derive(Default)]
pub(crate) struct Stream {
    pub(crate) status: u16,
    pub(crate) bytes: u64,
    pub(crate) outcome: Option<Result<(), RequestError>>,
    pub(crate) waker: Option<Waker>,
    /// The request body while some of it is unsent, and how much went.
    pub(crate) body: Option<Arc<[u8]>>,
    pub(crate) sent: usize,
    /// DATA the server lets this stream send.
    pub(crate) window: i64,
    /// gRPC: the answer's `grpc-status` and `grpc-message`.
    pub(crate) grpc: Option<(u16, String)>,
    /// When the read that brought the answer's first frame ended.
    pub(crate) first_byte: Option<Instant>,
}

impl State {
    /// Queues the DATA the windows allow, oldest stream first; a stream
    /// blocked on its own window lets the next one go, one blocked on the
    /// connection's stops them all.
    pub(crate) fn pump(&mut self) {
        let mut waiting = VecDeque::new();
        while let Some(id) = self.pending.pop_front() {
            if self.send_window <= 0 {
                waiting.push_back(id);
                continue;
            }
            let Some(s) = self.open.get_mut(&id) else {
                continue;
            };
            let Some(body) = s.body.clone() else { continue };
            if s.outcome.is_some() {
                s.body = None;
                continue;
            }
            while s.sent < body.len() && s.window > 0 && self.send_window > 0 {
                let room = s.window.min(self.send_window) as usize;
                let n = (body.len() - s.sent).min(room).min(self.max_frame);
                let last = s.sent + n == body.len();
                let flags = if last { f::END_STREAM } else { 0 };
                f::put_head(&mut self.out, n, f::DATA, flags, id);
                self.out.extend_from_slice(&body[s.sent..s.sent + n]);
                s.sent += n;
                s.window -= n as i64;
                self.send_window -= n as i64;
            }
            if s.sent < body.len() {
                waiting.push_back(id);
            } else {
                s.body = None;
            }
        }
        self.pending = waiting;
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state as consistent as
        // any frame boundary: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Hashes odd stream ids into distinct buckets (ids are unique; no
/// attacker chooses them).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id >> 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
