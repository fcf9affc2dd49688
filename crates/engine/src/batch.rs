//! Batch samples: `size` requests at concurrency c timed as one sample,
//! repeated until both the sample count and the duration are met.
use crate::exchange::Shared;
use crate::record::{Fault, Recorder, Timing};
use crate::thread_recorders::ThreadRecorders;
use poolbench_model::Sample;
use poolbench_targets::Target;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Batches {
    pub(crate) recorder: Recorder,
    pub(crate) samples: Vec<Sample>,
    pub(crate) measured: Duration,
}

pub(crate) async fn run<T: Target>(
    shared: Arc<Shared<T>>,
    concurrency: usize,
    size: u64,
    min_samples: u64,
    duration: Duration,
    threads: usize,
) -> Batches {
    let started = Instant::now();
    let max_samples = shared.budget.map(|n| (n / size).max(1));
    let mut out = Batches {
        recorder: Recorder::new(),
        samples: Vec::new(),
        measured: Duration::ZERO,
    };
    loop {
        let n = out.samples.len() as u64;
        let enough = n >= min_samples && started.elapsed() >= duration;
        if enough || max_samples.is_some_and(|m| n >= m) {
            return out;
        }
        let left = Arc::new(AtomicU64::new(size));
        let sample_start = Instant::now();
        // One recorder per load thread, not per sender (see `thread_recorders`).
        let recorders = Arc::new(ThreadRecorders::new(threads, false, 0));
        let tasks: Vec<_> = (0..concurrency)
            .map(|id| tokio::spawn(sender(shared.clone(), id, left.clone(), recorders.clone())))
            .collect();
        for t in tasks {
            let _ = t.await;
        }
        let sample = recorders.merged();
        let elapsed = sample_start.elapsed();
        out.measured += elapsed;
        out.samples.push(Sample {
            throughput_rps: sample.ok as f64 / elapsed.as_secs_f64().max(1e-9),
            p99_us: sample.latency.value_at_quantile(0.99) as f64 / 1000.0,
        });
        out.recorder.merge(&sample);
    }
}

async fn sender<T: Target>(
    shared: Arc<Shared<T>>,
    id: usize,
    left: Arc<AtomicU64>,
    recorders: Arc<ThreadRecorders>,
) {
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    let mut turn = id;
    while left
        .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
        .is_ok()
    {
        let start = Instant::now();
        let (outcome, done): (Result<Timing, Fault>, Instant) = shared
            .exchange(id, Some(turn), deadline.as_mut(), start)
            .await;
        turn = turn.wrapping_add(1);
        recorders.with(|rec| {
            rec.timeline(shared.origin, start, done, outcome.is_ok());
            match outcome {
                Ok(t) => rec.success(t, t.total()),
                Err(kind) => rec.error(kind),
            }
            rec.last_done = Some(done);
        });
    }
}
