//! The checkout and checkin path of `pool:N` as the engine drives it, with
//! a no-op connector: one task alone (the uncontended fast path), many
//! tasks on one current-thread runtime, and many tasks dealt over two load
//! threads that each run a current-thread runtime (as the engine's closed
//! loop does for PostgreSQL and Redis). A cycle is acquire, one yield while
//! holding (a request's wait for its answer), drop.
//!
//!     cargo bench -p poolbench-pool-benches --bench handoff
//!
//! Benches are named `handoff/<where>/<size>x<tasks>`. At the end a table
//! gives, per point, the median cycles/s of interleaved rounds and the
//! median per-round ratio against the same pool with as many tasks as
//! connections (tasks never wait there): with many waiters the pool's own
//! cost per cycle should stay near that.
mod common;

use common::{Opened, Poolbench};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::sync::oneshot;

/// Cycles in one criterion iteration (divisible by every task count).
const CYCLES_PER_ITER: u64 = 1024;
/// Where the tasks run, (pool size, tasks).
const POINTS: [(Place, usize, usize); 8] = [
    (Place::Alone, 1, 1),
    (Place::OneThread, 2, 2),
    (Place::OneThread, 2, 128),
    (Place::LoadThreads, 2, 2),
    (Place::LoadThreads, 2, 8),
    (Place::LoadThreads, 2, 32),
    (Place::LoadThreads, 2, 128),
    (Place::LoadThreads, 4, 256),
];
/// Interleaved rounds after criterion, and cycles in each.
const ROUNDS: usize = 9;
const ROUND_CYCLES: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// One task on a current-thread runtime.
    Alone,
    /// All tasks on one current-thread runtime.
    OneThread,
    /// Tasks dealt over two threads with a current-thread runtime each.
    LoadThreads,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::Alone => "alone",
            Place::OneThread => "one-thread",
            Place::LoadThreads => "load-threads",
        }
    }

    fn threads(self) -> usize {
        match self {
            Place::LoadThreads => 2,
            _ => 1,
        }
    }
}

/// Current-thread runtimes parked on threads of their own until dropped.
struct Threads {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    joins: Vec<std::thread::JoinHandle<()>>,
}

impl Threads {
    fn start(n: usize) -> Threads {
        let mut t = Threads {
            handles: Vec::new(),
            stops: Vec::new(),
            joins: Vec::new(),
        };
        for _ in 0..n {
            let rt = current_thread();
            let (stop, stopped) = oneshot::channel::<()>();
            t.handles.push(rt.handle().clone());
            t.stops.push(stop);
            t.joins.push(std::thread::spawn(move || {
                let _ = rt.block_on(stopped);
            }));
        }
        t
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.stops.clear();
        self.joins
            .drain(..)
            .for_each(|j| j.join().expect("load thread"));
    }
}

fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A warmed pool of `size` and the threads its tasks run on.
struct Setup {
    pool: Poolbench,
    threads: Threads,
    /// Waits for the tasks from the bench's own thread.
    waiter: Runtime,
}

impl Setup {
    fn new(place: Place, size: usize) -> Setup {
        let opened = Opened::default();
        let waiter = current_thread();
        let pool = waiter.block_on(async {
            let p = common::poolbench(size, &opened);
            common::warm(&p, size, &opened).await;
            p
        });
        Setup {
            pool,
            threads: Threads::start(place.threads()),
            waiter,
        }
    }

    /// `tasks` tasks dealt over the threads, `per_task` cycles each.
    fn run(&self, tasks: usize, per_task: u64) -> Duration {
        let start = Instant::now();
        let n = self.threads.handles.len();
        let joins: Vec<_> = (0..tasks)
            .map(|i| {
                let pool = self.pool.clone();
                self.threads.handles[i % n].spawn(async move {
                    for _ in 0..per_task {
                        let conn = pool.0.acquire().await.expect("no timeout here");
                        black_box(&conn);
                        tokio::task::yield_now().await;
                        drop(conn);
                    }
                })
            })
            .collect();
        self.waiter.block_on(async {
            for j in joins {
                j.await.expect("bench task");
            }
        });
        start.elapsed()
    }
}

/// Median cycles/s per point over interleaved rounds (the points taken in
/// a rotated order each round), and per-round ratios against the point of
/// the same place and size whose tasks never wait.
fn interleaved() {
    let setups: Vec<Setup> = POINTS.iter().map(|&(p, s, _)| Setup::new(p, s)).collect();
    let mut rates = vec![Vec::new(); POINTS.len()];
    for r in 0..ROUNDS {
        for k in 0..POINTS.len() {
            let i = (k + r) % POINTS.len();
            let tasks = POINTS[i].2;
            let per_task = ROUND_CYCLES / tasks as u64;
            let t = setups[i].run(tasks, per_task);
            rates[i].push((per_task * tasks as u64) as f64 / t.as_secs_f64());
        }
    }
    println!();
    println!(
        "handoff, interleaved: {ROUNDS} rounds of {ROUND_CYCLES} cycles per point ({})",
        common::machine()
    );
    println!(
        "| where | size x tasks | cycles/s (median) | vs tasks = size (median per-round ratio) |"
    );
    println!("|---|---|---:|---:|");
    for (i, &(place, size, tasks)) in POINTS.iter().enumerate() {
        let base = POINTS
            .iter()
            .position(|&(p, s, t)| p == place && s == size && t == size);
        let ratio = match base {
            Some(b) if b != i => {
                let r = (0..ROUNDS).map(|k| rates[i][k] / rates[b][k]).collect();
                format!("{:.2}", median(r))
            }
            _ => "–".into(),
        };
        let rate = median(rates[i].clone());
        println!(
            "| {} | {size}x{tasks} | {:.2} M | {ratio} |",
            place.name(),
            rate / 1e6
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut group = c.benchmark_group("handoff");
        group.throughput(Throughput::Elements(CYCLES_PER_ITER));
        for (place, size, tasks) in POINTS {
            let setup = Setup::new(place, size);
            let id = BenchmarkId::new(place.name(), format!("{size}x{tasks}"));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let per_task = iters * CYCLES_PER_ITER / tasks as u64;
                    setup.run(tasks, per_task.max(1))
                })
            });
        }
        group.finish();
    }
    c.final_summary();
    // Under `cargo test --benches` each bench ran once, as a smoke test.
    if std::env::args().any(|a| a == "--bench") {
        interleaved();
    }
}
