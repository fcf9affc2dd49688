//! The live view: read while the cells run, it only grows; read after,
//! every cell's figures are its result's (requests, errors, latency count,
//! connections opened), repetitions added, and a cell run again under
//! the same labels goes on from its totals.
use crate::common::*;
use poolbench_engine::{run, Events, Live};
use poolbench_model::{LiveCell, LiveCounters, RunResult};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

struct Watching(Arc<Live>);

impl Events for Watching {
    fn live(&self) -> Option<&Live> {
        Some(&self.0)
    }
}

fn find<'a>(s: &'a LiveCounters, strategy: &str) -> &'a LiveCell {
    s.cells.iter().find(|c| c.strategy == strategy).unwrap()
}

/// Each live cell is its result's.
fn matches_result(s: &LiveCounters, result: &RunResult) {
    assert_eq!(s.cells.len(), result.cells.len());
    for c in &result.cells {
        let l = find(s, &c.strategy);
        assert!(!l.active && l.in_flight == 0 && l.connections_open == 0);
        assert_eq!(l.requests, c.requests, "{}", c.strategy);
        assert_eq!(l.latency.count, c.ok, "{}", c.strategy);
        assert_eq!(l.checkout_wait.count, c.ok);
        let errors: u64 = l.errors.iter().map(|(_, n)| n).sum();
        assert_eq!(errors, c.errors.total);
        assert_eq!(l.connections_opened, c.pool.opened, "{}", c.strategy);
        assert!(l.hiccups.count > 0);
    }
}

#[test]
fn the_live_view_grows_and_ends_at_the_result() {
    let (server, mut plan) = quick(delay("2ms"), "pool:4,shared", &[8]);
    plan.reps = 2;
    plan.duration = Duration::from_millis(600);
    let live = Live::new();
    let done = Arc::new(AtomicBool::new(false));
    // A watcher reading every 20 ms: nothing it reads ever goes down.
    let watcher = {
        let (live, done) = (live.clone(), done.clone());
        std::thread::spawn(move || {
            let mut last: Vec<(String, u64, u64)> = Vec::new();
            let mut active_seen = false;
            while !done.load(Relaxed) {
                let s = live.snapshot();
                for c in &s.cells {
                    active_seen |= c.active && c.requests > 0 && c.in_flight > 0;
                    let before = last.iter().find(|(n, _, _)| *n == c.strategy);
                    if let Some((_, requests, opened)) = before {
                        assert!(c.requests >= *requests && c.connections_opened >= *opened);
                    }
                }
                last = s
                    .cells
                    .iter()
                    .map(|c| (c.strategy.clone(), c.requests, c.connections_opened))
                    .collect();
                std::thread::sleep(Duration::from_millis(20));
            }
            active_seen
        })
    };
    let _turn = turn();
    let result = run(&plan, None, &Watching(live.clone())).expect("run completes");
    done.store(true, Relaxed);
    assert!(
        watcher.join().unwrap(),
        "never saw a cell running with requests in flight"
    );
    matches_result(&live.snapshot(), &result);
    // The same plan again: the same cells, their totals doubled.
    let again = run(&plan, None, &Watching(live.clone())).expect("run completes");
    let mut both = result.clone();
    for (a, b) in both.cells.iter_mut().zip(&again.cells) {
        assert_eq!(a.strategy, b.strategy);
        a.requests += b.requests;
        a.ok += b.ok;
        a.errors.total += b.errors.total;
        a.pool.opened += b.pool.opened;
    }
    matches_result(&live.snapshot(), &both);
    drop(server);
}
