//! One grid cell: c closed-loop workers over one strategy.
use crate::plan::{CellSpec, Plan};
use crate::record::Recorder;
use poolbench_pool::{AcquireError, BuildError, MetricsSnapshot, Strategy};
use poolbench_targets::{ErrorKind, Target};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::time::{timeout_at, Sleep};

/// Longest wait, after the measured time, for requests still in flight.
const MAX_DRAIN: Duration = Duration::from_secs(3);

/// What a cell measured, before it becomes a `CellResult`.
pub(crate) struct CellOutcome {
    pub(crate) recorder: Recorder,
    pub(crate) measured: Duration,
    pub(crate) unfinished: u64,
    pub(crate) metrics: MetricsSnapshot,
    pub(crate) idle_at_end: u64,
}

struct Shared<T: Target> {
    strategy: Strategy<T>,
    target: T,
    timeout: Duration,
    budget: Option<u64>,
    completed: AtomicU64,
}

type Timing = (Duration, Duration, u64);

pub(crate) async fn run_cell<T: Target + Clone>(
    target: T,
    cell: CellSpec,
    plan: &Plan,
) -> Result<CellOutcome, BuildError> {
    let strategy = Strategy::new(&cell.strategy, target.clone(), plan.pool.clone())?;
    // Connect failures while prefilling show up again as counted errors
    // when the workers connect.
    let _ = strategy.prefill().await;
    let shared = Arc::new(Shared {
        strategy: strategy.clone(),
        target,
        timeout: plan.timeout,
        budget: plan.requests,
        completed: AtomicU64::new(0),
    });
    let measure_from = Instant::now() + plan.warmup;
    let end = measure_from + plan.duration;
    let recorders: Vec<_> = (0..cell.concurrency)
        .map(|_| Arc::new(Mutex::new(Recorder::new())))
        .collect();
    let handles: Vec<_> = recorders
        .iter()
        .enumerate()
        .map(|(id, rec)| tokio::spawn(worker(shared.clone(), id, rec.clone(), measure_from, end)))
        .collect();

    let hard_stop = tokio::time::Instant::from_std(end + plan.timeout.min(MAX_DRAIN));
    let mut unfinished = 0;
    for mut h in handles {
        if timeout_at(hard_stop, &mut h).await.is_err() {
            h.abort();
            let _ = h.await;
            unfinished += 1;
        }
    }
    drop(shared);

    let mut recorder = Recorder::new();
    for rec in &recorders {
        recorder.merge(&rec.lock().unwrap_or_else(|p| p.into_inner()));
    }
    let idle_at_end = strategy.idle() as u64;
    strategy.close_idle();
    let metrics = strategy.metrics();
    let budget_spent = plan
        .requests
        .is_some_and(|n| recorder.ok + errors(&recorder) >= n);
    let stop = match recorder.last_done {
        Some(last) if budget_spent => last,
        _ => end,
    };
    Ok(CellOutcome {
        measured: stop.saturating_duration_since(measure_from),
        recorder,
        unfinished,
        metrics,
        idle_at_end,
    })
}

fn errors(r: &Recorder) -> u64 {
    r.errors.iter().sum()
}

/// One closed-loop worker. A request counts when it completes inside the
/// measured window (after warm-up, before the end, within the request
/// budget); what completes outside it is counted apart and not measured.
async fn worker<T: Target>(
    shared: Arc<Shared<T>>,
    id: usize,
    rec: Arc<Mutex<Recorder>>,
    measure_from: Instant,
    end: Instant,
) {
    // One timer per worker, pushed forward before each request: moving a
    // registered deadline later is a compare-and-swap, where a fresh
    // timeout per request would take the timer wheel's lock twice.
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    loop {
        if Instant::now() >= end || shared.budget_spent() {
            return;
        }
        let outcome = exchange(&shared, id, deadline.as_mut()).await;
        let done = Instant::now();
        let mut r = rec.lock().unwrap_or_else(|p| p.into_inner());
        if done < measure_from {
            r.warmup += 1;
            continue;
        }
        if done > end || !shared.take_budget() {
            r.outside += 1;
            return;
        }
        match outcome {
            Ok((checkout, request, bytes)) => r.success(checkout, request, bytes),
            Err(kind) => r.error(kind),
        }
        r.last_done = Some(done);
    }
}

impl<T: Target> Shared<T> {
    fn budget_spent(&self) -> bool {
        self.budget
            .is_some_and(|n| self.completed.load(Relaxed) >= n)
    }

    /// Count one completion against the budget; false when it is spent.
    fn take_budget(&self) -> bool {
        match self.budget {
            Some(n) => self.completed.fetch_add(1, Relaxed) < n,
            None => true,
        }
    }
}

/// Acquire, send, release. A request the connection closed under before it
/// was sent is retried once on another connection and not counted as an
/// error.
async fn exchange<T: Target>(
    s: &Shared<T>,
    key: usize,
    mut deadline: Pin<&mut Sleep>,
) -> Result<Timing, ErrorKind> {
    let mut checkout = Duration::ZERO;
    let mut request = Duration::ZERO;
    for attempt in 0..2 {
        let t0 = Instant::now();
        let mut lease = match s.strategy.acquire_keyed(key).await {
            Ok(lease) => lease,
            Err(AcquireError::Timeout(_)) => return Err(ErrorKind::CheckoutTimeout),
            Err(AcquireError::NestedCheckout { .. }) => return Err(ErrorKind::NestedCheckout),
            Err(AcquireError::Connect(e)) => return Err(e.kind),
        };
        let t1 = Instant::now();
        checkout += t1 - t0;
        deadline
            .as_mut()
            .reset(tokio::time::Instant::from_std(t1 + s.timeout));
        let sent = tokio::select! {
            biased;
            sent = s.target.send(&mut lease) => Ok(sent),
            _ = deadline.as_mut() => Err(()),
        };
        request += t1.elapsed();
        match sent {
            Ok(Ok(reply)) => return Ok((checkout, request, reply.bytes)),
            Ok(Err(e)) => {
                if e.broken {
                    lease.mark_broken();
                }
                if !(e.unsent && attempt == 0) {
                    return Err(e.kind);
                }
            }
            Err(_) => {
                lease.mark_broken();
                return Err(ErrorKind::Timeout);
            }
        }
    }
    Err(ErrorKind::Reset)
}
