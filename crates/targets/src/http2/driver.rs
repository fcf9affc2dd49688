//! The driver task of a lean HTTP/2 connection (`http2::wire`): it owns the
//! socket, writes the frames the requests queued, reads the server's
//! frames, and records each answer on its request's stream.
use crate::http2::frame as f;
use crate::http2::frame::Head;
use crate::http2::frame_events::{Event, FrameReader};
use crate::http2::state::{Shared, Stream, UNLIMITED_STREAMS};
use crate::{ErrorKind, RequestError};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Read buffer: room for several frames of the largest size.
const READ_BUFFER: usize = 64 * 1024;
/// Rounds of write-and-read per poll before the driver lets other tasks run.
const ROUNDS: usize = 16;

/// The connection's driver task.
pub(crate) struct Driver<I> {
    io: I,
    shared: Arc<Shared>,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Written since the last successful flush (TLS keeps records back).
    unflushed: bool,
    reader: FrameReader,
    wakers: Vec<Waker>,
    yielded: bool,
}

impl<I: AsyncRead + AsyncWrite + Unpin> Driver<I> {
    pub(crate) fn new(io: I, shared: Arc<Shared>) -> Self {
        let mut wbuf = Vec::with_capacity(4096);
        wbuf.extend_from_slice(f::PREFACE);
        f::put_settings(
            &mut wbuf,
            &[
                (f::SETTINGS_ENABLE_PUSH, 0),
                (f::SETTINGS_INITIAL_WINDOW_SIZE, f::MAX_WINDOW),
            ],
        );
        f::put_u32_frame(
            &mut wbuf,
            f::WINDOW_UPDATE,
            0,
            f::MAX_WINDOW - f::INITIAL_WINDOW,
        );
        f::put_ping(&mut wbuf, 0, b"poolbnch");
        Driver {
            io,
            shared,
            rbuf: vec![0; READ_BUFFER],
            rstart: 0,
            rend: 0,
            wbuf,
            wpos: 0,
            unflushed: false,
            reader: FrameReader::new(),
            wakers: Vec::new(),
            yielded: false,
        }
    }

    /// Drives the connection until the server's PING answer.
    pub(crate) fn poll_handshake(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), RequestError>> {
        let result = match self.drive(cx) {
            Poll::Pending if self.reader.pong => return Poll::Ready(Ok(())),
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(())) => Err(RequestError::protocol("the connection ended")),
            Poll::Ready(Err(e)) => Err(e),
        };
        Poll::Ready(result.map_err(|e| match self.reader.settings_seen {
            true => e,
            false => RequestError::broken(
                e.kind,
                format!(
                    "not an HTTP/2 server (the HTTP/2 handshake failed: {})",
                    e.message
                ),
            ),
        }))
    }

    /// Writes and reads until neither makes progress. Ready when the
    /// connection is over: every handle dropped (or GOAWAY) and no stream
    /// open, or failed.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), RequestError>> {
        for _ in 0..ROUNDS {
            if self.take_out(cx) && self.wbuf.is_empty() && !self.unflushed {
                return Poll::Ready(Ok(()));
            }
            let wrote = self.write(cx)?;
            let read = self.read(cx)?;
            if !wrote && !read {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Registers the driver's waker and moves queued frames to the write
    /// buffer; true when the connection is no longer needed.
    fn take_out(&mut self, cx: &mut Context<'_>) -> bool {
        let mut state = self.shared.lock();
        if !state
            .driver
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.driver = Some(cx.waker().clone());
        }
        if !state.out.is_empty() {
            if self.wbuf.is_empty() {
                std::mem::swap(&mut state.out, &mut self.wbuf);
            } else {
                self.wbuf.extend_from_slice(&state.out);
                state.out.clear();
            }
        }
        let unused = self.shared.handles.load(Ordering::Acquire) == 0 || state.goaway.is_some();
        unused && state.open.is_empty()
    }

    /// Writes what it can of the write buffer, then flushes; true if
    /// anything went out.
    fn write(&mut self, cx: &mut Context<'_>) -> Result<bool, RequestError> {
        let start = self.wpos;
        while self.wpos < self.wbuf.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => return Err(closed("the connection closed")),
                Poll::Ready(Ok(n)) => self.wpos += n,
                Poll::Ready(Err(e)) => return Err(io_error(&e)),
                Poll::Pending => break,
            }
        }
        let wrote = self.wpos > start;
        self.unflushed |= wrote;
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
            if self.unflushed {
                match Pin::new(&mut self.io).poll_flush(cx) {
                    Poll::Ready(Ok(())) => self.unflushed = false,
                    Poll::Ready(Err(e)) => return Err(io_error(&e)),
                    Poll::Pending => {}
                }
            }
        }
        Ok(wrote)
    }

    /// Reads once and handles every whole frame read; true if anything
    /// was read.
    fn read(&mut self, cx: &mut Context<'_>) -> Result<bool, RequestError> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rbuf.len() - self.rend < f::MAX_FRAME + f::HEAD {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        let mut buf = ReadBuf::new(&mut self.rbuf[self.rend..]);
        match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
            Poll::Pending => Ok(false),
            Poll::Ready(Err(e)) => Err(io_error(&e)),
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                Err(closed("the server closed the connection"))
            }
            Poll::Ready(Ok(())) => {
                self.rend += buf.filled().len();
                self.frames()?;
                Ok(true)
            }
        }
    }

    /// Handles the whole frames in the read buffer.
    fn frames(&mut self) -> Result<(), RequestError> {
        let mut pos = self.rstart;
        while self.rend - pos >= f::HEAD {
            let head = Head::parse(&self.rbuf[pos..]);
            self.reader.check(&head)?;
            if self.rend - pos - f::HEAD < head.len {
                break;
            }
            let payload = &self.rbuf[pos + f::HEAD..pos + f::HEAD + head.len];
            pos += f::HEAD + head.len;
            self.reader.frame(&head, payload, &mut self.wbuf)?;
        }
        if let Some(streams) = self.reader.streams.take() {
            let mut state = self.shared.lock();
            state.max_streams = streams;
            state.wake_capacity();
            drop(state);
            // The strategies share a connection among at least one.
            let streams = streams.clamp(1, UNLIMITED_STREAMS);
            self.shared.streams.store(streams, Ordering::Relaxed);
        }
        self.rstart = pos;
        self.reader.replenish(&mut self.wbuf);
        self.apply();
        Ok(())
    }

    /// Records the frames' events on their streams, then wakes the
    /// requests that have their answer.
    fn apply(&mut self) {
        if self.reader.events.is_empty() {
            return;
        }
        // One clock read per read that brought events: the first byte
        // of the answers that begin in it.
        let now = std::time::Instant::now();
        let mut state = self.shared.lock();
        for event in self.reader.events.drain(..) {
            match event {
                Event::Headers(id, status, end) => {
                    if let Some(s) = state.open.get_mut(&id) {
                        s.first_byte.get_or_insert(now);
                        if status >= 200 && s.status == 0 {
                            s.status = status;
                        }
                        if end {
                            finish(s, Ok(()), &mut self.wakers);
                        }
                    }
                }
                Event::Grpc(id, code, message) => {
                    if let Some(s) = state.open.get_mut(&id) {
                        s.grpc = Some((code, message));
                    }
                }
                Event::Data(id, bytes, end) => {
                    if let Some(s) = state.open.get_mut(&id) {
                        s.bytes += bytes as u64;
                        if end {
                            finish(s, Ok(()), &mut self.wakers);
                        }
                    }
                }
                Event::Reset(id, code) => {
                    if let Some(s) = state.open.get_mut(&id) {
                        finish(s, Err(reset(code)), &mut self.wakers);
                    }
                }
                Event::Window(0, increment) => state.send_window += i64::from(increment),
                Event::Window(id, increment) => {
                    if let Some(s) = state.open.get_mut(&id) {
                        s.window += i64::from(increment);
                    }
                }
                Event::InitialWindow(size) => {
                    let delta = i64::from(size) - state.initial_window;
                    state.initial_window = i64::from(size);
                    for s in state.open.values_mut() {
                        s.window += delta;
                    }
                }
                Event::MaxFrame(size) => {
                    state.max_frame = (size as usize).clamp(f::MAX_FRAME, 1 << 24);
                }
                Event::GoAway(last, code) => {
                    state.goaway = Some(last);
                    state.wake_capacity();
                    self.shared.broken.store(true, Ordering::Release);
                    for (_, s) in state.open.iter_mut().filter(|(id, _)| **id > last) {
                        let cut = RequestError::unsent(format!(
                            "the server is going away (GOAWAY, code {code})"
                        ));
                        finish(s, Err(cut), &mut self.wakers);
                    }
                }
            }
        }
        if !state.pending.is_empty() {
            state.pump();
        }
        drop(state);
        self.wakers.drain(..).for_each(Waker::wake);
    }

    /// Ends the connection: open streams fail with `why`.
    fn end(&mut self, why: RequestError) {
        self.shared.broken.store(true, Ordering::Release);
        let mut state = self.shared.lock();
        state.ended = Some(why.message.clone());
        state.wake_capacity();
        for s in state.open.values_mut() {
            let e = RequestError::broken(why.kind, &why.message);
            finish(s, Err(e), &mut self.wakers);
        }
        drop(state);
        self.wakers.drain(..).for_each(Waker::wake);
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> Future for Driver<I> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Yield once after each wake-up: the runtime runs a task woken by
        // the running one next, so without this the driver would write each
        // request alone as its sender wakes it; after one yield, the requests
        // of every task woken in the same round go out in one write.
        if !self.yielded {
            self.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.yielded = false;
        match self.drive(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => {
                self.end(closed("the connection was closed"));
                Poll::Ready(())
            }
            Poll::Ready(Err(e)) => {
                self.end(e);
                Poll::Ready(())
            }
        }
    }
}

fn finish(s: &mut Stream, outcome: Result<(), RequestError>, wakers: &mut Vec<Waker>) {
    if s.outcome.is_some() {
        return;
    }
    s.outcome = Some(outcome);
    if let Some(w) = s.waker.take() {
        wakers.push(w);
    }
}

/// A stream reset by the server: a refused stream was never processed and
/// may be retried.
fn reset(code: u32) -> RequestError {
    RequestError {
        broken: false,
        unsent: code == f::REFUSED_STREAM,
        ..RequestError::broken(
            ErrorKind::Reset,
            format!("HTTP/2 stream reset (code {code})"),
        )
    }
}

fn closed(message: &str) -> RequestError {
    RequestError::broken(ErrorKind::Reset, format!("HTTP/2: {message}"))
}

fn io_error(e: &std::io::Error) -> RequestError {
    RequestError::broken(ErrorKind::of_io(e), format!("HTTP/2: {e}"))
}
