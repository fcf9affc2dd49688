//! One run of one grid cell: a fresh strategy, the load model's workers,
//! and what they recorded.
use crate::batch;
use crate::checkout::Checkout;
use crate::checkout::StrategyError;
use crate::counts::bucket;
use crate::cpu::{busy_share, cores, machine_jiffies, process_cpu};
use crate::drive::{Drained, Drive};
use crate::exchange::Shared;
use crate::hiccup::HiccupMeter;
use crate::live::{Live, RunView};
use crate::record::Recorder;
use crate::schedule::Schedule;
use crate::thread_recorders::ThreadRecorders;
use crate::threads::LoadThreads;
use hdrhistogram::Histogram;
use poolbench_model::{
    CellSpec, LatencyInterval, LoadModel, Plan, PoolCounters, Sample, Stall, Timeline, BUCKET,
};
use poolbench_targets::Target;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait, after the measured time, for requests still in flight.
const MAX_DRAIN: Duration = Duration::from_secs(3);
/// Shortest stretch without a success that counts as a stall.
const MIN_STALL: Duration = Duration::from_secs(2);

/// What one run of a cell measured, before it becomes a `CellResult`.
pub(crate) struct CellOutcome {
    pub(crate) recorder: Recorder,
    pub(crate) measured: Duration,
    pub(crate) unfinished: u64,
    pub(crate) metrics: PoolCounters,
    /// Connections opened before the measured window began.
    pub(crate) opened_before_measuring: u64,
    pub(crate) idle_at_end: u64,
    /// Share of the machine's cores this process used, where known.
    pub(crate) generator_cpu: Option<f64>,
    /// Share of all cores busy (anything on the machine), where known.
    pub(crate) machine_cpu: Option<f64>,
    /// Batch samples (empty for other models).
    pub(crate) samples: Vec<Sample>,
    pub(crate) timeline: Timeline,
    pub(crate) stalls: Vec<Stall>,
    /// How late the hiccup meter woke, in ns, over the measured window.
    pub(crate) hiccups: Histogram<u64>,
    /// From the cell's start to the last warm-up connect's end.
    pub(crate) opened_in_warmup_by: Option<Duration>,
    /// A stop was requested while the cell ran: it ended early.
    pub(crate) interrupted: bool,
    /// Requests sent again because the server never processed them.
    pub(crate) resent: u64,
    /// Reuses of connections that had sat idle.
    pub(crate) idle_reuse: poolbench_model::IdleReuse,
    /// Latency per second of the measured window (`--hdr-log`).
    pub(crate) intervals: Vec<LatencyInterval>,
    /// Wall-clock time of the cell's start (Unix seconds).
    pub(crate) started_unix_s: f64,
    /// With a slot: how late the cell started against it.
    pub(crate) schedule_lag: Option<Duration>,
    /// TLS targets: the client's handshakes over the run.
    pub(crate) tls: Option<poolbench_model::TlsFacts>,
}

pub(crate) async fn run_cell<T: Target + Clone>(
    target: T,
    cell: CellSpec,
    plan: &Plan,
    threads: Option<&LoadThreads>,
    slot: Option<std::time::SystemTime>,
    live: Option<&Live>,
) -> Result<CellOutcome, StrategyError> {
    let strategy = Checkout::new(&cell.strategy, target.clone(), plan.pool.clone())?;
    // Connect failures while prefilling show up again as counted errors
    // when the workers connect.
    strategy.prefill().await;
    let schedule_lag = match slot {
        Some(at) => Some(wait_for(at).await),
        None => None,
    };
    let run = Started::now(strategy, target, plan, &cell, live.is_some());
    if let Some(live) = live {
        live.run_started(run.view());
    }
    let drive = Drive {
        shared: run.shared.clone(),
        recorders: run.recorders.clone(),
        concurrency: cell.concurrency,
        hard_stop: tokio::time::Instant::from_std(run.end + plan.timeout.min(MAX_DRAIN)),
    };
    let drained = match plan.load {
        LoadModel::Open { rate, arrival } => {
            let mut schedule = Schedule::new(run.origin, rate, arrival);
            if let Some(ramp) = &plan.ramp {
                schedule = schedule.ramping(ramp.clone(), run.measure_from);
            }
            drive.open(schedule, threads).await
        }
        _ => drive.closed(threads).await,
    };
    let mut outcome = run.finish(cell, plan, drained, live).await;
    outcome.schedule_lag = schedule_lag;
    Ok(outcome)
}

/// A cell run under way: its clock, what its load shares, and what
/// watches it.
struct Started<T: Target + Clone> {
    strategy: Checkout<T>,
    shared: Arc<Shared<T>>,
    recorders: Arc<ThreadRecorders>,
    origin: Instant,
    started_unix_s: f64,
    measure_from: Instant,
    end: Instant,
    cpu_before: (Option<f64>, Option<(u64, u64)>),
    opened_at_start: tokio::task::JoinHandle<u64>,
    sampler: Option<tokio::task::JoinHandle<Vec<u32>>>,
    hiccups: HiccupMeter,
}

impl<T: Target + Clone> Started<T> {
    /// The cell's clock starts: warm-up now, the measured window after it.
    fn now(
        strategy: Checkout<T>,
        target: T,
        plan: &Plan,
        cell: &CellSpec,
        watched: bool,
    ) -> Started<T> {
        let cpu_before = (process_cpu(), machine_jiffies());
        let origin = Instant::now();
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let measure_from = origin + plan.warmup;
        let end = match plan.load {
            // Batches are timed on their own after the warm-up.
            LoadModel::Batch { .. } => measure_from,
            _ => measure_from + plan.duration,
        };
        let shared = Arc::new(Shared {
            strategy: strategy.clone(),
            target,
            timeout: plan.timeout,
            nested: plan.nested,
            budget: plan.requests,
            completed: AtomicU64::new(0),
            resent: AtomicU64::new(0),
            idle: Default::default(),
            think: plan.think_time.unwrap_or_default(),
            origin,
            measure_from,
            end,
            ramp: plan.ramp.clone(),
            in_flight: watched.then(|| Arc::new(AtomicU64::new(0))),
            line: match strategy {
                Checkout::Ours(_) => crate::line::Line::fits(cell, plan, origin),
                _ => None,
            },
        });
        let opened_at_start = {
            let strategy = strategy.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(measure_from.into()).await;
                strategy.metrics().opened
            })
        };
        // The cell's whole length in timeline buckets, and a second more.
        let buckets = end.saturating_duration_since(origin).as_millis() as usize
            / poolbench_model::BUCKET.as_millis() as usize
            + 10;
        let recorders = Arc::new(ThreadRecorders::new(
            plan.threads,
            plan.hdr_intervals || plan.ramp.is_some(),
            buckets,
        ));
        // A ramp's timeline also shows the connections open, sampled.
        let sampler = plan
            .ramp
            .is_some()
            .then(|| sample_open_connections(strategy.clone(), origin, end));
        Started {
            strategy,
            shared,
            recorders,
            origin,
            started_unix_s,
            measure_from,
            end,
            cpu_before,
            opened_at_start,
            sampler,
            hiccups: HiccupMeter::start(measure_from, end),
        }
    }

    /// What a live view reads of this run while it goes.
    fn view(&self) -> RunView {
        let strategy = self.strategy.clone();
        RunView {
            recorders: self.recorders.clone(),
            hiccups: self.hiccups.view(),
            in_flight: self.shared.in_flight.clone().unwrap_or_default(),
            pool: Box::new(move || strategy.metrics()),
        }
    }

    /// The load has stopped: batches run where the model has them, then
    /// everything recorded is gathered.
    async fn finish(
        self,
        cell: CellSpec,
        plan: &Plan,
        drained: Drained,
        live: Option<&Live>,
    ) -> CellOutcome {
        let hiccups = self.hiccups.finish();
        // Interrupted: the window ends where the stop came.
        let interrupted_at = interrupted_before(self.end);
        let window = (self.measure_from, interrupted_at.unwrap_or(self.end));
        let mut recorder = self.recorders.merged();
        recorder.dropped += drained.dropped;
        let (samples, measured) = measure(&self.shared, cell, plan, &mut recorder, window).await;
        let intervals = intervals_of(&mut recorder, self.measure_from, measured);
        let resent = self.shared.resent.load(Relaxed);
        let idle_reuse = self.shared.idle.take();
        let (generator_cpu, machine_cpu) = cpu_shares(self.cpu_before, self.origin);
        drop(self.shared);
        let (idle_at_end, metrics) = close(&self.strategy);
        if let Some(live) = live {
            live.run_finished(&recorder, &hiccups, &metrics);
        }
        let opened_before_measuring = self.opened_at_start.await.unwrap_or(0);
        let timeline = timeline_of(&recorder, self.origin, self.measure_from, self.sampler).await;
        let stalls = stalls_of(&recorder, &timeline);
        let opened_in_warmup_by = recorder
            .warmup_opened
            .map(|t| t.saturating_duration_since(self.origin));
        CellOutcome {
            recorder,
            measured,
            unfinished: drained.unfinished,
            metrics,
            opened_before_measuring,
            idle_at_end,
            generator_cpu,
            machine_cpu,
            samples,
            timeline,
            stalls,
            hiccups,
            opened_in_warmup_by,
            interrupted: interrupted_at.is_some(),
            resent,
            idle_reuse,
            intervals,
            started_unix_s: self.started_unix_s,
            schedule_lag: None,
            tls: None,
        }
    }
}

/// When a stop came, if it came before the planned `end`.
fn interrupted_before(end: Instant) -> Option<Instant> {
    crate::interrupt::requested()
        .map(|_| Instant::now())
        .filter(|t| *t < end)
}

/// The measured window's samples and length: the batches', or up to the budget or `end`.
async fn measure<T: Target + Clone>(
    shared: &Arc<Shared<T>>,
    cell: CellSpec,
    plan: &Plan,
    recorder: &mut Recorder,
    (measure_from, end): (Instant, Instant),
) -> (Vec<Sample>, Duration) {
    // To the last counted completion when the request budget ran out.
    let measured = match recorder.last_done {
        Some(last) if shared.budget_spent() => last.saturating_duration_since(measure_from),
        _ => end.saturating_duration_since(measure_from),
    };
    match batches(shared, cell, plan, recorder).await {
        Some((samples, measured)) => (samples, measured),
        None => (Vec::new(), measured),
    }
}

/// Latency per second of the measured window, taken from `recorder`.
fn intervals_of(
    recorder: &mut Recorder,
    measure_from: Instant,
    measured: Duration,
) -> Vec<LatencyInterval> {
    recorder
        .intervals
        .take()
        .map(|iv| iv.finish(measure_from, measured))
        .unwrap_or_default()
}

/// The strategy's idle connections at the end, then its counters once they are closed.
fn close<T: Target + Clone>(strategy: &Checkout<T>) -> (u64, PoolCounters) {
    let idle_at_end = strategy.idle() as u64;
    strategy.close_idle();
    (idle_at_end, strategy.metrics())
}

/// The run's timeline, with the connections open and checkout waits for a ramp.
async fn timeline_of(
    recorder: &Recorder,
    origin: Instant,
    measure_from: Instant,
    sampler: Option<tokio::task::JoinHandle<Vec<u32>>>,
) -> Timeline {
    let mut timeline = recorder.counts.timeline(bucket(origin, measure_from));
    if let Some(sampler) = sampler {
        timeline.open = sampler.await.unwrap_or_default();
        timeline.wait_us = recorder.counts.waits();
    }
    timeline
}

/// The timeline's stalls: no success for 2 s, or twenty median latencies if longer.
fn stalls_of(recorder: &Recorder, timeline: &Timeline) -> Vec<Stall> {
    let p50 = Duration::from_nanos(recorder.latency.value_at_quantile(0.5));
    timeline.stalls(MIN_STALL.max(p50 * 20))
}

/// The batches, where the model has them (into `recorder`): their
/// samples and measured time.
async fn batches<T: Target + Clone>(
    shared: &Arc<Shared<T>>,
    cell: CellSpec,
    plan: &Plan,
    recorder: &mut Recorder,
) -> Option<(Vec<Sample>, Duration)> {
    let LoadModel::Batch { size, samples } = plan.load else {
        return None;
    };
    let shared = shared.clone();
    let (c, d) = (cell.concurrency, plan.duration);
    let b = batch::run(shared, c, size, samples, d, plan.threads).await;
    recorder.merge(&b.recorder);
    Some((b.samples, b.measured))
}

/// This process's share of the machine's cores since `before` (its CPU
/// time and the machine's jiffies then) and `origin`, and the share of
/// all cores busy.
#[allow(clippy::type_complexity)]
fn cpu_shares(
    before: (Option<f64>, Option<(u64, u64)>),
    origin: Instant,
) -> (Option<f64>, Option<f64>) {
    let wall = origin.elapsed().as_secs_f64();
    let generator = match (before.0, process_cpu()) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / (wall * cores())),
        _ => None,
    };
    (generator, busy_share(before.1, machine_jiffies()))
}

/// The most connections open in each half-bucket of the cell, until `end`
/// or a stop.
fn sample_open_connections<T: Target + Clone>(
    strategy: Checkout<T>,
    origin: Instant,
    end: Instant,
) -> tokio::task::JoinHandle<Vec<u32>> {
    tokio::spawn(async move {
        let mut open: Vec<u32> = Vec::new();
        let mut tick = tokio::time::interval(BUCKET / 2);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = crate::interrupt::wait() => break,
            }
            let now = Instant::now();
            if now > end {
                break;
            }
            let b = bucket(origin, now);
            if open.len() <= b {
                open.resize(b + 1, 0);
            }
            open[b] = open[b].max(strategy.metrics().open as u32);
        }
        open
    })
}

/// Sleep until the wall-clock instant `at` (a stop ends the wait); how
/// late it is past `at`.
async fn wait_for(at: std::time::SystemTime) -> Duration {
    let ahead = at
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    tokio::select! {
        _ = tokio::time::sleep(ahead) => {}
        _ = crate::interrupt::wait() => {}
    }
    std::time::SystemTime::now()
        .duration_since(at)
        .unwrap_or_default()
}
