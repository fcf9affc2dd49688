//! What every load model shares: the cell's strategy and target, its
//! windows, and one exchange (acquire, send, release).
use crate::checkout::{Checked, Checkout};
use crate::counts::bucket;
use crate::record::{Fault, Recorder, Timing};
use crate::thread_recorders::ThreadRecorders;
use poolbench_targets::{ErrorKind, RequestError, Target};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::Sleep;

/// Sends of one request, the first included, while the server refuses it
/// unprocessed (an HTTP/2 server's REFUSED_STREAM or GOAWAY, a kept-alive
/// connection closed first); all within the request's timeout.
const SENDS: usize = 4;

pub(crate) struct Shared<T: Target> {
    pub(crate) strategy: Checkout<T>,
    pub(crate) target: T,
    pub(crate) timeout: Duration,
    /// Each request holds a second lease while it runs (nested checkout).
    pub(crate) nested: bool,
    pub(crate) budget: Option<u64>,
    pub(crate) completed: AtomicU64,
    /// Requests the server never processed, sent again on another
    /// connection (see `CellResult::resent`).
    pub(crate) resent: AtomicU64,
    /// Reuses of connections that had sat idle.
    pub(crate) idle: crate::idle_watch::IdleWatch,
    /// Closed loop: each worker's pause between requests, its connection
    /// back in the pool (`--think-time`).
    pub(crate) think: Duration,
    /// The cell's start, origin of its timeline.
    pub(crate) origin: Instant,
    pub(crate) measure_from: Instant,
    pub(crate) end: Instant,
    /// The concurrency over time, when it ramps.
    pub(crate) ramp: Option<poolbench_model::Ramp>,
    /// Exchanges under way, counted only for a live view.
    pub(crate) in_flight: Option<Arc<AtomicU64>>,
    /// `pool:N` with more workers than connections: the workers that wait
    /// (see `line.rs`).
    pub(crate) line: Option<crate::line::Line>,
}

/// One exchange counted in flight until it ends (or is dropped).
struct InFlight<'a>(Option<&'a AtomicU64>);

impl<'a> InFlight<'a> {
    fn enter(count: Option<&'a AtomicU64>) -> InFlight<'a> {
        if let Some(c) = count {
            c.fetch_add(1, Relaxed);
        }
        InFlight(count)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.0 {
            c.fetch_sub(1, Relaxed);
        }
    }
}

/// Where a completion falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Window {
    Warmup,
    Measured,
    /// After the end, or past the request budget: the worker stops.
    Outside,
}

impl<T: Target> Shared<T> {
    pub(crate) fn budget_spent(&self) -> bool {
        self.budget
            .is_some_and(|n| self.completed.load(Relaxed) >= n)
    }

    fn take_budget(&self) -> bool {
        match self.budget {
            Some(n) => self.completed.fetch_add(1, Relaxed) < n,
            None => true,
        }
    }

    /// Record a completion that started at `start` and ended at `done`.
    /// A request counts when it completes inside the measured window (after
    /// warm-up, before the end, within the budget).
    pub(crate) fn record(
        &self,
        rec: &mut Recorder,
        start: Instant,
        done: Instant,
        outcome: Result<Timing, Fault>,
        latency: Duration,
    ) -> Window {
        rec.timeline(self.origin, start, done, outcome.is_ok());
        // Checkout waits per bucket: only a ramp's timeline shows them.
        if let (Ok(t), Some(_)) = (&outcome, &self.ramp) {
            rec.counts.wait(bucket(self.origin, done), t.checkout);
        }
        if done < self.measure_from {
            if let Ok(t) = &outcome {
                if t.connect.is_some() {
                    // The connect ended where the request began.
                    let opened = done - t.request;
                    rec.warmup_opened = rec.warmup_opened.max(Some(opened));
                }
            }
            rec.warmup += 1;
            return Window::Warmup;
        }
        if done > self.end || !self.take_budget() {
            rec.outside += 1;
            return Window::Outside;
        }
        match outcome {
            Ok(t) => {
                rec.success(t, latency);
                if let Some(iv) = &mut rec.intervals {
                    let second = done.saturating_duration_since(self.measure_from).as_secs();
                    iv.record(second as u32, latency.as_nanos() as u64);
                }
            }
            Err(kind) => rec.error(kind),
        }
        rec.last_done = Some(done);
        Window::Measured
    }

    /// Waits in the line that passed the checkout timeout: each a
    /// `checkout_timeout` error where it gave up, as a pool waiter's.
    pub(crate) fn gave_up(&self, recorders: &ThreadRecorders, starts: &mut Vec<Instant>) {
        let Some(line) = &self.line else { return };
        let after = line.give_up();
        for start in starts.drain(..) {
            self.strategy.timed_out_in_line();
            let fault: Fault = ErrorKind::CheckoutTimeout.into();
            recorders.with(|r| self.record(r, start, start + after, Err(fault), after));
        }
    }

    /// A lease, and with `nested` a second one taken while holding the
    /// first (the handler pattern: holding one connection, ask for another).
    async fn leases(
        &self,
        key: usize,
        turn: Option<usize>,
    ) -> Result<(Checked<T>, Option<Checked<T>>), Fault> {
        let first = self.strategy.acquire(key, turn).await?;
        let second = match self.nested {
            true => Some(
                self.strategy
                    .acquire(key, turn.map(|t| t.wrapping_add(1)))
                    .await?,
            ),
            false => None,
        };
        Ok((first, second))
    }

    /// Acquire, send, release, from `start` (a clock read the caller
    /// already made); returns the outcome and when it came. A request the
    /// connection closed under before it was sent (or the server refused
    /// unprocessed) is sent again, up to [`SENDS`] times in all, on
    /// another connection and not counted as an error. `deadline` is the
    /// worker's reusable request timer. A worker's `turn` picks its
    /// connection at `round-robin:N` (a resend takes the next one); without
    /// one, the strategy's shared counter does.
    pub(crate) async fn exchange(
        &self,
        key: usize,
        turn: Option<usize>,
        mut deadline: Pin<&mut Sleep>,
        start: Instant,
    ) -> (Result<Timing, Fault>, Instant) {
        let _in_flight = InFlight::enter(self.in_flight.as_deref());
        let mut checkout = Duration::ZERO;
        let mut connect: Option<Duration> = None;
        let mut request = Duration::ZERO;
        let mut t0 = start;
        for attempt in 0..SENDS {
            let attempt_turn = turn.map(|t| t.wrapping_add(attempt));
            let (mut lease, _second) = match self.leases(key, attempt_turn).await {
                Ok(leases) => leases,
                Err(fault) => return (Err(fault), Instant::now()),
            };
            let t1 = Instant::now();
            // Idle until this checkout: no clock read beyond `t1`.
            let idle = lease.returned_at().map(|r| t1.saturating_duration_since(r));
            checkout += waited_for_checkout(&mut lease, t1 - t0, &mut connect);
            // Moving a registered deadline later is a compare-and-swap; a
            // fresh timeout per request would lock the timer wheel twice.
            deadline
                .as_mut()
                .reset(tokio::time::Instant::from_std(t1 + self.timeout));
            let sent = tokio::select! {
                biased;
                sent = self.target.send(&mut lease) => Some(sent),
                _ = deadline.as_mut() => None,
            };
            let t2 = Instant::now();
            lease.done_at(t2);
            request += t2 - t1;
            t0 = t2;
            match sent {
                Some(Ok(reply)) => {
                    self.idle.alive(idle);
                    let spent = (checkout, connect, request);
                    return (Ok(self.answered(&lease, spent, t2, reply.bytes)), t2);
                }
                Some(Err(e)) => {
                    if let Some(fault) = self.send_failed(&mut lease, e, idle, attempt) {
                        return (Err(fault), t2);
                    }
                }
                None => {
                    lease.mark_abandoned();
                    return (Err(ErrorKind::Timeout.into()), t2);
                }
            }
        }
        (Err(ErrorKind::Reset.into()), t0)
    }

    /// The timing of an answered request from its sends' times (`spent`), the last ending at `t2`.
    #[inline]
    fn answered(
        &self,
        lease: &Checked<T>,
        (checkout, connect, request): (Duration, Option<Duration>, Duration),
        t2: Instant,
        bytes: u64,
    ) -> Timing {
        // The request's time less the answer's first to last
        // byte: earlier sends of it count before its first byte.
        let first_byte = self
            .target
            .first_byte(lease)
            .map(|at| request.saturating_sub(t2.saturating_duration_since(at)));
        let behind = self.target.behind(lease);
        Timing::of((checkout, connect, request, first_byte, behind, bytes))
    }

    /// After a failed send: `None` to send it again on another connection, else its fault.
    #[inline]
    fn send_failed(
        &self,
        lease: &mut Checked<T>,
        e: RequestError,
        idle: Option<Duration>,
        attempt: usize,
    ) -> Option<Fault> {
        if e.broken {
            lease.mark_broken();
        }
        let resend = e.unsent && attempt + 1 < SENDS;
        self.idle.failed(idle, &e, resend);
        if resend {
            self.resent.fetch_add(1, Relaxed);
            None
        } else {
            Some(Fault::from(e))
        }
    }
}

/// The checkout's part of `waited`: less any connect the lease made (added to `connect`).
#[inline]
fn waited_for_checkout<T: Target>(
    lease: &mut Checked<T>,
    waited: Duration,
    connect: &mut Option<Duration>,
) -> Duration {
    let opened = lease.take_connect_time();
    if let Some(c) = opened {
        *connect.get_or_insert(Duration::ZERO) += c;
    }
    waited.saturating_sub(opened.unwrap_or_default())
}
