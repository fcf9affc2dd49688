//! Open loop: requests leave at their intended times whatever the answers;
//! latency counts from the intended time (coordinated omission corrected),
//! and the request time alone is kept as the uncorrected latency.
//!
//! Each load thread paces its own share of the schedule (`Share`) from one
//! sender task: it waits to each intended time on its runtime's precise
//! timer (`precise_wake`), polling the requests it has in flight meanwhile,
//! and sends that request on its own thread, with no task spawned and no
//! other thread woken. Only requests whose time has come are in flight or
//! waiting for a connection. How late each one starts (the send lag) is
//! recorded.
use crate::exchange::{Shared, Window};
use crate::precise_wake::Wake;
use crate::schedule::Share;
use crate::thread_recorders::ThreadRecorders;
use futures_util::stream::{FuturesUnordered, StreamExt};
use poolbench_targets::Target;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sent later than this after its intended time, a request counts as late.
const LATE: Duration = Duration::from_millis(1);
/// How often a sender looks again while the in-flight cap is reached by
/// other threads' requests.
const CAP_POLL: Duration = Duration::from_micros(50);

/// The requests in flight over all senders, and their cap.
pub(crate) struct Cap {
    limit: usize,
    now: AtomicUsize,
}

impl Cap {
    pub(crate) fn new(limit: usize) -> Arc<Cap> {
        Arc::new(Cap {
            limit: limit.max(1),
            now: AtomicUsize::new(0),
        })
    }

    fn full(&self) -> bool {
        self.now.load(Relaxed) >= self.limit
    }
}

/// One request counted against the cap until it ends (or is dropped).
struct Slot(Arc<Cap>);

impl Slot {
    fn take(cap: &Arc<Cap>) -> Slot {
        cap.now.fetch_add(1, Relaxed);
        Slot(cap.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Relaxed);
    }
}

/// What a sender left when it stopped.
#[derive(Default)]
pub(crate) struct Sent {
    /// Requests still in flight at the hard stop (or a stop request).
    pub(crate) unfinished: u64,
    /// Measured requests not sent, being a timeout behind schedule.
    pub(crate) dropped: u64,
}

/// One load thread's sender: its share of the schedule, sent from this
/// task, then the requests in flight drained until `hard_stop`.
pub(crate) async fn sender<T: Target>(
    shared: Arc<Shared<T>>,
    recorders: Arc<ThreadRecorders>,
    mut share: Share,
    cap: Arc<Cap>,
    hard_stop: Instant,
) -> Sent {
    let mut flying = FuturesUnordered::new();
    let mut wake = Wake::new();
    let mut sent = Sent::default();
    loop {
        let (seq, intended) = share.next();
        if intended >= shared.end || shared.budget_spent() {
            break;
        }
        if !wait_until(intended, &mut flying, &mut wake).await
            || !room(&cap, &shared, &mut flying).await
        {
            break;
        }
        if Instant::now().saturating_duration_since(intended) > shared.timeout {
            // So far behind that the answer would be a timeout anyway.
            if intended >= shared.measure_from {
                sent.dropped += 1;
            }
            continue;
        }
        let slot = Slot::take(&cap);
        let key = seq % cap.limit;
        flying.push(request(
            shared.clone(),
            recorders.clone(),
            key,
            intended,
            slot,
        ));
    }
    drain(&mut flying, hard_stop).await;
    sent.unfinished = flying.len() as u64;
    sent
}

/// Wait until `at`, driving the requests in flight meanwhile (at least
/// once, so a request just added starts now even when the next is due
/// already); false on a stop request.
async fn wait_until<F: Future<Output = ()>>(
    at: Instant,
    flying: &mut FuturesUnordered<F>,
    wake: &mut Wake,
) -> bool {
    loop {
        if crate::interrupt::requested().is_some() {
            return false;
        }
        tokio::select! {
            biased;
            Some(()) = flying.next(), if !flying.is_empty() => {}
            () = wake.toward(at) => {}
        }
        if Instant::now() >= at {
            return true;
        }
    }
}

/// Wait while the in-flight cap is reached; false when the cell ended
/// (nothing more can be measured) or a stop was requested meanwhile.
async fn room<T: Target, F: Future<Output = ()>>(
    cap: &Cap,
    shared: &Shared<T>,
    flying: &mut FuturesUnordered<F>,
) -> bool {
    while cap.full() {
        if Instant::now() >= shared.end || crate::interrupt::requested().is_some() {
            return false;
        }
        tokio::select! {
            biased;
            Some(()) = flying.next(), if !flying.is_empty() => {}
            () = tokio::time::sleep(CAP_POLL) => {}
        }
    }
    Instant::now() < shared.end
}

/// The requests in flight to their end, until `hard_stop` or a stop
/// request; those left are dropped with `flying` (their leases returned).
async fn drain<F: Future<Output = ()>>(flying: &mut FuturesUnordered<F>, hard_stop: Instant) {
    let hard_stop = tokio::time::Instant::from_std(hard_stop);
    while !flying.is_empty() {
        tokio::select! {
            next = tokio::time::timeout_at(hard_stop, flying.next()) => {
                if !matches!(next, Ok(Some(()))) {
                    return;
                }
            }
            _ = crate::interrupt::wait() => return,
        }
    }
}

/// One request, sent now, meant for `intended`.
async fn request<T: Target>(
    shared: Arc<Shared<T>>,
    recorders: Arc<ThreadRecorders>,
    key: usize,
    intended: Instant,
    _slot: Slot,
) {
    let start = Instant::now();
    let lag = start.saturating_duration_since(intended);
    let mut deadline = Box::pin(tokio::time::sleep(shared.timeout));
    // Boxed, so the future in the sender's set stays small.
    let (outcome, done) = Box::pin(shared.exchange(key, None, deadline.as_mut(), start)).await;
    recorders.with(|r| {
        if shared.record(r, start, done, outcome, done - intended) == Window::Measured {
            let _ = r.send_lag.record(lag.as_nanos() as u64);
            if lag > LATE {
                r.late += 1;
            }
        }
    });
}
