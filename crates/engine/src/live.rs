//! A read-only view of the run under way, for whoever watches it (the
//! CLI's `--metrics-listen`): the engine registers each cell and each run
//! of it here, and [`Live::snapshot`] reads them on demand — the load
//! threads' recorders merged (one short lock per slot), the strategy's
//! counters, the requests in flight. Nothing is done per request unless
//! a run has a `Live`, and then only an in-flight count.
use crate::record::Recorder;
use crate::thread_recorders::ThreadRecorders;
use hdrhistogram::Histogram;
use poolbench_model::{new_histogram, CellSpec, LiveCell, LiveCounters, LiveHistogram};
use poolbench_pool::PoolCounters;
use poolbench_targets::ErrorKind;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

/// The live view of one process's runs (all of them: a `tune`'s points,
/// a scenario's steps), shared with its watcher.
#[derive(Default)]
pub struct Live {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    cells: Vec<Entry>,
    /// The cell running now, an index into `cells`.
    active: Option<usize>,
    /// The run of it under way.
    run: Option<RunView>,
}

/// One cell: its finished runs' totals, and their digest.
struct Entry {
    digest: LiveCell,
    totals: Totals,
}

/// A run under way, as the watcher reads it.
pub(crate) struct RunView {
    pub(crate) recorders: Arc<ThreadRecorders>,
    pub(crate) hiccups: Arc<Mutex<Histogram<u64>>>,
    pub(crate) in_flight: Arc<AtomicU64>,
    /// The strategy's counters now.
    pub(crate) pool: Box<dyn Fn() -> PoolCounters + Send + Sync>,
}

/// Counts and histograms that add up over runs.
#[derive(Clone)]
struct Totals {
    requests: u64,
    errors: [u64; ErrorKind::ALL.len()],
    late: u64,
    opened: u64,
    latency: Histogram<u64>,
    checkout: Histogram<u64>,
    send_lag: Histogram<u64>,
    hiccups: Histogram<u64>,
}

impl Totals {
    fn new() -> Totals {
        Totals {
            requests: 0,
            errors: [0; ErrorKind::ALL.len()],
            late: 0,
            opened: 0,
            latency: new_histogram(),
            checkout: new_histogram(),
            send_lag: new_histogram(),
            hiccups: new_histogram(),
        }
    }

    /// A load thread's (or a whole run's) recorder added.
    fn add(&mut self, r: &Recorder) {
        self.requests += r.ok + r.errors.iter().sum::<u64>();
        for (a, b) in self.errors.iter_mut().zip(r.errors) {
            *a += b;
        }
        self.late += r.late;
        // Auto-resizing histograms of the same precision always merge.
        let _ = self.latency.add(&r.latency);
        let _ = self.checkout.add(&r.checkout);
        for (latency, checkout) in r.pending_latency_and_checkout() {
            let _ = self.latency.record(latency);
            let _ = self.checkout.record(checkout);
        }
        let _ = self.send_lag.add(&r.send_lag);
    }

    /// The digest of these totals for `cell`.
    fn digest(&self, cell: &LiveCell) -> LiveCell {
        LiveCell {
            requests: self.requests,
            errors: ErrorKind::ALL
                .iter()
                .map(|k| (k.name().to_string(), self.errors[*k as usize]))
                .collect(),
            late: self.late,
            in_flight: 0,
            connections_open: 0,
            connections_opened: self.opened,
            latency: LiveHistogram::of(&self.latency),
            checkout_wait: LiveHistogram::of(&self.checkout),
            send_lag: LiveHistogram::of(&self.send_lag),
            hiccups: LiveHistogram::of(&self.hiccups),
            ..cell.clone()
        }
    }
}

impl Live {
    pub fn new() -> Arc<Live> {
        Arc::new(Live::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every cell so far, the running one as it stands now.
    pub fn snapshot(&self) -> LiveCounters {
        let state = self.lock();
        let mut cells: Vec<LiveCell> = state.cells.iter().map(|e| e.digest.clone()).collect();
        if let (Some(i), Some(run)) = (state.active, &state.run) {
            let entry = &state.cells[i];
            let mut totals = entry.totals.clone();
            run.recorders.each(|r| totals.add(r));
            let pool = (run.pool)();
            totals.opened += pool.opened;
            let _ = totals
                .hiccups
                .add(&*run.hiccups.lock().unwrap_or_else(|p| p.into_inner()));
            cells[i] = LiveCell {
                in_flight: run.in_flight.load(Relaxed),
                connections_open: pool.open,
                ..totals.digest(&entry.digest)
            };
        }
        LiveCounters { cells }
    }

    /// `cell` starts (or starts again: its totals go on).
    pub(crate) fn cell_started(&self, cell: &CellSpec, shard: Option<usize>) {
        let strategy = cell.strategy.to_string();
        let mut state = self.lock();
        let found = state.cells.iter().position(|e| {
            e.digest.strategy == strategy
                && e.digest.concurrency == cell.concurrency
                && e.digest.shard == shard
        });
        let i = found.unwrap_or_else(|| {
            let digest = LiveCell {
                strategy,
                concurrency: cell.concurrency,
                pool_size: cell.strategy.size(),
                shard,
                ..LiveCell::default()
            };
            let totals = Totals::new();
            let digest = totals.digest(&digest);
            state.cells.push(Entry { digest, totals });
            state.cells.len() - 1
        });
        state.cells[i].digest.active = true;
        state.active = Some(i);
    }

    /// The active cell's next run is under way.
    pub(crate) fn run_started(&self, run: RunView) {
        self.lock().run = Some(run);
    }

    /// The run under way ended with these totals (its recorders merged,
    /// its batches included), hiccups and strategy counters.
    pub(crate) fn run_finished(
        &self,
        recorder: &Recorder,
        hiccups: &Histogram<u64>,
        pool: &PoolCounters,
    ) {
        let mut state = self.lock();
        state.run = None;
        if let Some(i) = state.active {
            let entry = &mut state.cells[i];
            entry.totals.add(recorder);
            let _ = entry.totals.hiccups.add(hiccups);
            entry.totals.opened += pool.opened;
            entry.digest = entry.totals.digest(&entry.digest);
        }
    }

    /// A run ended without its totals (it failed): forget it.
    pub(crate) fn run_abandoned(&self) {
        self.lock().run = None;
    }

    /// The active cell is done.
    pub(crate) fn cell_finished(&self) {
        let mut state = self.lock();
        state.run = None;
        if let Some(i) = state.active.take() {
            state.cells[i].digest.active = false;
        }
    }
}
