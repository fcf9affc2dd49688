//! Checkout throughput: get-and-drop cycles of a no-op connection.
//!
//! For each (pool size, tasks) point, `tasks` tasks on a 2-worker
//! multi-thread tokio runtime loop acquire → drop, and the total cycles per
//! second is measured, for this crate's `pool:N`, deadpool (managed), bb8
//! and qp. Each pool is built once per benchmark and pre-warmed (all N
//! connections open). One criterion iteration is `CYCLES_PER_ITER` cycles
//! split evenly across the tasks; a sample of `iters` iterations spawns the
//! tasks once and each runs `iters * CYCLES_PER_ITER / tasks` cycles.
//!
//!     cargo bench -p poolbench-pool-benches --bench checkout
//!
//! Benches are named `checkout/<pool>/<size>x<tasks>`; criterion's usual
//! filter works (`-- checkout/poolbench/8x64`). The peers of one point run
//! back to back, and a table of cycles/s with ratios is printed at the end,
//! then a second one from rounds that interleave the peers (see
//! `interleaved`), whose ratios hold up better on a noisy machine.
mod common;

use common::{BenchPool, Kind, Opened, KINDS};
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cycles in one criterion iteration (divisible by every task count).
const CYCLES_PER_ITER: u64 = 4096;
/// (pool size, tasks).
const POINTS: [(usize, usize); 4] = [(8, 8), (16, 32), (8, 64), (4, 256)];
/// A sample taking longer than this is taken as a hang (no sample here
/// should take more than a few seconds).
const WATCHDOG: Duration = Duration::from_secs(30);
/// Cycles of the quick run made before each benchmark, to catch a pool that
/// hangs (it is then skipped and reported).
const PROBE_CYCLES: u64 = 200 * CYCLES_PER_ITER;

const SAMPLE_SIZE: usize = 30;
const WARM_UP: Duration = Duration::from_millis(1500);
const MEASUREMENT: Duration = Duration::from_secs(5);

/// Samples per benchmark, (cycles, elapsed), in the order taken.
static RECORDS: Mutex<BTreeMap<(usize, usize, usize), Outcome>> = Mutex::new(BTreeMap::new());

/// What pools that count their waits said, one line per benchmark.
static WAITS: Mutex<Vec<String>> = Mutex::new(Vec::new());

enum Outcome {
    Samples(Vec<(u64, Duration)>),
    Hung(&'static str),
}

/// Run `tasks` tasks of `per_task` cycles each; `None` if they do not all
/// finish within the watchdog.
async fn cycles<P: BenchPool>(pool: &P, tasks: usize, per_task: u64) -> Option<Duration> {
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                for _ in 0..per_task {
                    let conn = pool.get().await;
                    black_box(&conn);
                    drop(conn);
                }
            })
        })
        .collect();
    let all = async {
        for h in handles {
            h.await.expect("bench task");
        }
    };
    tokio::time::timeout(WATCHDOG, all).await.ok()?;
    Some(start.elapsed())
}

fn bench<P: BenchPool>(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    kind: Kind,
    (size, tasks): (usize, usize),
    pool: P,
    opened: &Opened,
) {
    let key = (point_index(size, tasks), kind_index(kind), 0);
    let label = format!("{size}x{tasks}");
    // Probe first, on a pool of its own: a pool that hangs is skipped.
    let probe_opened = Opened::default();
    let probe_rt = common::runtime();
    let probe_ok = with_pool!(probe_rt, kind, size, |probe, probe_opened| {
        probe_rt.block_on(cycles(&probe, tasks, PROBE_CYCLES / tasks as u64))
    });
    probe_rt.shutdown_background();
    drop(probe_opened);
    if probe_ok.is_none() {
        eprintln!(
            "checkout/{}/{label}: HUNG ({} cycles not done in {WATCHDOG:?}); skipped",
            kind.name(),
            PROBE_CYCLES
        );
        RECORDS.lock().unwrap().insert(key, Outcome::Hung("probe"));
        return;
    }

    let mut samples = Vec::new();
    let mut hung = false;
    group.bench_function(BenchmarkId::new(kind.name(), &label), |b| {
        b.iter_custom(|iters| {
            if hung {
                return WATCHDOG; // keep criterion going; reported as hung
            }
            let total = iters * CYCLES_PER_ITER;
            match rt.block_on(cycles(&pool, tasks, total / tasks as u64)) {
                Some(elapsed) => {
                    samples.push((total, elapsed));
                    elapsed
                }
                None => {
                    eprintln!("checkout/{}/{label}: HUNG during measurement", kind.name());
                    hung = true;
                    WATCHDOG
                }
            }
        })
    });
    assert!(hung || opened.get() == size, "no connection reopened");
    if let Some((checkouts, waited)) = pool.waits() {
        WAITS.lock().unwrap().push(format!(
            "{}/{label}: {checkouts} checkouts, {waited} waited for a permit",
            kind.name()
        ));
    }
    let outcome = if hung {
        Outcome::Hung("measurement")
    } else {
        // The last SAMPLE_SIZE calls are the measured samples (warm-up first).
        let keep = samples.len().saturating_sub(SAMPLE_SIZE);
        Outcome::Samples(samples.split_off(keep))
    };
    RECORDS.lock().unwrap().insert(key, outcome);
}

fn point_index(size: usize, tasks: usize) -> usize {
    POINTS.iter().position(|&p| p == (size, tasks)).unwrap()
}

fn kind_index(kind: Kind) -> usize {
    KINDS.iter().position(|&k| k == kind).unwrap()
}

/// Cycles/s as criterion's slope estimate: a line through the origin
/// fitted to (cycles, time) over the samples.
fn rate(samples: &[(u64, Duration)]) -> f64 {
    let sxy: f64 = samples
        .iter()
        .map(|(n, t)| *n as f64 * t.as_secs_f64())
        .sum();
    let sxx: f64 = samples.iter().map(|(n, _)| (*n as f64).powi(2)).sum();
    sxx / sxy
}

fn summary() {
    let records = RECORDS.lock().unwrap();
    if records.is_empty() {
        return;
    }
    println!();
    println!("checkout summary ({}; 2 tokio workers)", common::machine());
    println!("cycles/s, slope over the measured samples");
    println!(
        "| size x tasks | poolbench | deadpool | bb8 | qp | poolbench/deadpool | poolbench/bb8 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (pi, (size, tasks)) in POINTS.iter().enumerate() {
        let get = |k: usize| records.get(&(pi, k, 0));
        if (0..KINDS.len()).all(|k| get(k).is_none()) {
            continue;
        }
        let rates: Vec<Option<f64>> = (0..KINDS.len())
            .map(|k| match get(k) {
                Some(Outcome::Samples(s)) if !s.is_empty() => Some(rate(s)),
                _ => None,
            })
            .collect();
        let cell = |k: usize| match (get(k), rates[k]) {
            (_, Some(r)) => format!("{:.2} M", r / 1e6),
            (Some(Outcome::Hung(when)), _) => format!("hung ({when})"),
            _ => "–".into(),
        };
        let ratio = |k: usize| match (rates[0], rates[k]) {
            (Some(a), Some(b)) => format!("{:.2}", a / b),
            _ => "–".into(),
        };
        println!(
            "| {size}x{tasks} | {} | {} | {} | {} | {} | {} |",
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            ratio(1),
            ratio(2)
        );
    }
    for line in WAITS.lock().unwrap().iter() {
        println!("{line}");
    }
}

/// The positional filter criterion was given, if any (checked here as a
/// substring, so that filtered-out pools are not built and probed).
fn filter() -> Option<String> {
    const TAKES_VALUE: [&str; 12] = [
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if TAKES_VALUE.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// Interleaved rounds: cycles of one round, and rounds.
const ROUND_CYCLES: u64 = 1 << 18;
const ROUNDS: usize = 15;

type Runner<'a> = Box<dyn Fn(usize, u64) -> Option<Duration> + 'a>;

fn runner<'a, P: BenchPool>(rt: &'a tokio::runtime::Runtime, pool: P) -> Runner<'a> {
    Box::new(move |tasks, per_task| rt.block_on(cycles(&pool, tasks, per_task)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// After criterion: the peers of each point once more, in interleaved
/// rounds (order rotated each round), so that each ratio compares runs
/// made moments apart. On a shared, noisy machine this is the ratio to
/// trust; criterion's samples of two pools are seconds apart.
fn interleaved(only: Option<&str>) {
    println!();
    println!(
        "interleaved: {ROUNDS} rounds of {ROUND_CYCLES} cycles per pool and point; \
         median cycles/s, and median of the per-round ratios"
    );
    println!(
        "| size x tasks | poolbench | deadpool | bb8 | qp | poolbench/deadpool | poolbench/bb8 | poolbench/qp |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (size, tasks) in POINTS {
        let label = format!("{size}x{tasks}");
        if only.is_some_and(|f| {
            !KINDS
                .iter()
                .any(|k| format!("checkout/{}/{label}", k.name()).contains(f))
        }) {
            continue;
        }
        let rt = common::runtime();
        let runners: Vec<Runner<'_>> = KINDS
            .iter()
            .map(|&kind| {
                with_pool!(rt, kind, size, |pool, opened| {
                    let _: &Opened = &opened;
                    runner(&rt, pool)
                })
            })
            .collect();
        let per_task = ROUND_CYCLES / tasks as u64;
        let mut rates: Vec<Vec<Option<f64>>> = vec![Vec::new(); KINDS.len()];
        for r in 0..ROUNDS {
            for k in 0..KINDS.len() {
                let i = (k + r) % KINDS.len();
                if rates[i].last() == Some(&None) {
                    rates[i].push(None); // hung before: skip
                    continue;
                }
                let rate = runners[i](tasks, per_task)
                    .map(|t| (per_task * tasks as u64) as f64 / t.as_secs_f64());
                rates[i].push(rate);
            }
        }
        let cell = |i: usize| {
            let ok: Vec<f64> = rates[i].iter().flatten().copied().collect();
            if ok.len() < ROUNDS {
                "hung".to_string()
            } else {
                format!("{:.2} M", median(ok) / 1e6)
            }
        };
        let ratio = |i: usize| {
            let r: Option<Vec<f64>> = (0..ROUNDS)
                .map(|r| Some(rates[0][r]? / rates[i][r]?))
                .collect();
            r.map_or("–".into(), |r| format!("{:.2}", median(r)))
        };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            ratio(1),
            ratio(2),
            ratio(3)
        );
        drop(runners);
        rt.shutdown_background();
    }
}

fn main() {
    let only = filter();
    let mut c = Criterion::default()
        .sample_size(SAMPLE_SIZE)
        .warm_up_time(WARM_UP)
        .measurement_time(MEASUREMENT)
        .configure_from_args();
    {
        let mut group = c.benchmark_group("checkout");
        group.throughput(Throughput::Elements(CYCLES_PER_ITER));
        for point in POINTS {
            let (size, tasks) = point;
            for kind in KINDS {
                let id = format!("checkout/{}/{size}x{tasks}", kind.name());
                if only.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                    continue;
                }
                // One runtime per benchmark: the pool's background tasks
                // (and any task a hung pool strands) go with it.
                let rt = common::runtime();
                with_pool!(rt, kind, size, |pool, opened| {
                    bench(&mut group, &rt, kind, point, pool, &opened)
                });
                rt.shutdown_background();
            }
        }
        group.finish();
    }
    c.final_summary();
    // Under `cargo test --benches` (no `--bench`) each bench ran once, as a
    // smoke test: no tables.
    if std::env::args().any(|a| a == "--bench") {
        summary();
        interleaved(only.as_deref());
    }
}
