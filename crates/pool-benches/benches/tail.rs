//! Checkout wait tail under overload: 1,000 tasks share 50 connections,
//! each task doing 20 cycles of acquire → hold 1 ms (`tokio::time::sleep`)
//! → drop, on a 2-worker multi-thread tokio runtime. Every checkout's wait
//! (acquire call to lease in hand) goes into an HDR histogram per pool;
//! the pools run in interleaved rounds (order rotated each round) and a
//! table of p50, p99, p99.99 and max wait is printed.
//!
//!     cargo bench -p poolbench-pool-benches --bench tail
//!
//! `TAIL_ROUNDS` (default 5) sets the rounds; a pool named as an argument
//! (`-- poolbench bb8`) limits the run to those pools. Under
//! `cargo test --benches` it runs one round, without qp.
mod common;

use common::{BenchPool, Kind, Opened, KINDS};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 50;
const TASKS: usize = 1000;
const CYCLES: usize = 20;
const HOLD: Duration = Duration::from_millis(1);
/// A round taking longer than this is taken as a hang (one takes about
/// TASKS * CYCLES / CONNECTIONS holds, well under a second).
const WATCHDOG: Duration = Duration::from_secs(20);

/// One round: every checkout's wait in ns, and the round's wall time; `None`
/// if the round did not finish within the watchdog.
async fn round<P: BenchPool>(pool: &P) -> Option<(Vec<u64>, Duration)> {
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut waits = Vec::with_capacity(CYCLES);
                for _ in 0..CYCLES {
                    let asked = Instant::now();
                    let conn = pool.get().await;
                    waits.push(asked.elapsed().as_nanos() as u64);
                    tokio::time::sleep(HOLD).await;
                    drop(conn);
                }
                waits
            })
        })
        .collect();
    let all = async {
        let mut waits = Vec::with_capacity(TASKS * CYCLES);
        for h in handles {
            waits.extend(h.await.expect("tail task"));
        }
        waits
    };
    let waits = tokio::time::timeout(WATCHDOG, all).await.ok()?;
    Some((waits, start.elapsed()))
}

struct Tally {
    kind: Kind,
    hist: Histogram<u64>,
    walls: Vec<Duration>,
    p9999s: Vec<u64>,
    hung: bool,
}

type Runner<'a> = Box<dyn Fn() -> Option<(Vec<u64>, Duration)> + 'a>;

fn runner<'a, P: BenchPool>(rt: &'a tokio::runtime::Runtime, pool: P) -> Runner<'a> {
    Box::new(move || rt.block_on(round(&pool)))
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn main() {
    let rounds: usize = std::env::var("TAIL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    // Run by `cargo test --benches` (no `--bench`): one round, as a smoke
    // test, without qp (which hangs here: see bench/log/RESULTS.md).
    let smoke = !std::env::args().any(|a| a == "--bench");
    let rounds = if smoke { 1 } else { rounds };
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let kinds: Vec<Kind> = KINDS
        .into_iter()
        .filter(|k| wanted.is_empty() || wanted.iter().any(|w| w == k.name()))
        .filter(|&k| !(smoke && k == Kind::Qp))
        .collect();

    let rt = common::runtime();
    let mut runners: Vec<(Kind, Runner<'_>)> = Vec::new();
    for &kind in &kinds {
        let r = with_pool!(rt, kind, CONNECTIONS, |pool, opened| {
            let _: &Opened = &opened;
            runner(&rt, pool)
        });
        runners.push((kind, r));
    }
    let mut tallies: Vec<Tally> = kinds
        .iter()
        .map(|&kind| Tally {
            kind,
            hist: Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("histogram"),
            walls: Vec::new(),
            p9999s: Vec::new(),
            hung: false,
        })
        .collect();

    eprintln!(
        "tail: {TASKS} tasks, {CONNECTIONS} connections, {CYCLES} cycles each, hold {HOLD:?}, {rounds} rounds"
    );
    for r in 0..rounds {
        for i in 0..runners.len() {
            let i = (i + r) % runners.len();
            if tallies[i].hung {
                continue;
            }
            let t = &mut tallies[i];
            match (runners[i].1)() {
                Some((waits, wall)) => {
                    let mut h = Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).unwrap();
                    for w in waits {
                        h.saturating_record(w.max(1));
                    }
                    t.p9999s.push(h.value_at_quantile(0.9999));
                    t.hist.add(&h).expect("same bounds");
                    t.walls.push(wall);
                    eprintln!(
                        "round {r} {:<9} wall {:>7.1} ms  p99.99 {} ms",
                        t.kind.name(),
                        wall.as_secs_f64() * 1e3,
                        ms(h.value_at_quantile(0.9999))
                    );
                }
                None => {
                    eprintln!(
                        "round {r} {}: HUNG (not done in {WATCHDOG:?})",
                        t.kind.name()
                    );
                    t.hung = true;
                }
            }
        }
    }
    drop(runners);
    rt.shutdown_background();

    println!();
    println!(
        "tail summary ({}; 2 tokio workers): {TASKS} tasks x {CYCLES} cycles on {CONNECTIONS} connections, hold {HOLD:?}, {rounds} rounds",
        common::machine()
    );
    println!("checkout wait in ms over all rounds; last column: p99.99 of each round, min–max");
    println!("| pool | checkouts | p50 | p99 | p99.99 | max | mean | wall/round (median) | p99.99 per round |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for t in &tallies {
        if t.hist.is_empty() {
            println!("| {} | hung | | | | | | | |", t.kind.name());
            continue;
        }
        let mut walls = t.walls.clone();
        walls.sort();
        let (lo, hi) = (
            t.p9999s.iter().min().copied().unwrap_or(0),
            t.p9999s.iter().max().copied().unwrap_or(0),
        );
        println!(
            "| {}{} | {} | {} | {} | {} | {} | {} | {:.1} ms | {}–{} |",
            t.kind.name(),
            if t.hung {
                " (hung in a later round)"
            } else {
                ""
            },
            t.hist.len(),
            ms(t.hist.value_at_quantile(0.5)),
            ms(t.hist.value_at_quantile(0.99)),
            ms(t.hist.value_at_quantile(0.9999)),
            ms(t.hist.max()),
            ms(t.hist.mean() as u64),
            walls[walls.len() / 2].as_secs_f64() * 1e3,
            ms(lo),
            ms(hi)
        );
    }
}
