//! `run`'s load threads when `--threads` is not given: one, or one per
//! core, compared before the cells. On a machine the generator shares
//! with the service, which is better depends on the service: against
//! nginx with one worker, pipelining carried 133,000–164,000 req/s on one
//! thread and 104,000–107,000 on two; against PostgreSQL's ten backends
//! (processes that each take their share of the cores), one thread
//! carried about two thirds of what two did. No fixed count is right for
//! both (bench/log/RESULTS.md, 2026-11-28), so a closed-loop run long
//! enough to afford it measures its largest cell briefly with each, paired
//! (A B A B), and keeps the count whose runs carried more ([`faster`]).
//! Unlike `tune` ([`poolbench_tune::keep_threads`]), which keeps more
//! threads only for 5% more, `run` has no margin: against MariaDB two
//! threads carried 5-7% more than one, and the margin kept one thread in
//! 3 of 7 rounds, the run then 5% short of `--threads 2` (bench/threads.sh
//! mysql, 2026-11-29). A margin loses what lies under it every time; no
//! margin loses only when the comparison's noise turns a real gap round.
use crate::progress::Progress;
use crate::Failure;
use poolbench_engine::CounterReader;
use poolbench_model::{CellSpec, GeneratorThreads, LoadModel, Plan};
use std::time::Duration;

/// Cells shorter than this are not worth the comparison's few seconds:
/// the run keeps one thread per core.
pub(crate) const LEAST_DURATION: Duration = Duration::from_secs(5);
/// Each comparison run: its warm-up, then its measurement.
const WARMUP: Duration = Duration::from_millis(300);
const MEASURE: Duration = Duration::from_secs(1);
/// Runs of each count.
const ROUNDS: usize = 2;

/// Whether `plan` (its threads not asked for) compares thread counts: a
/// closed loop over a duration of at least [`LEAST_DURATION`] on a
/// machine of more than one core, without a request count, a ramp, a
/// shard's schedule, a think time (a client that pauses is not held back
/// by its threads) or a setup statement (which each run would repeat).
pub(crate) fn compares(plan: &Plan, cores: usize) -> bool {
    matches!(plan.load, LoadModel::Closed)
        && cores > 1
        && plan.duration >= LEAST_DURATION
        && plan.requests.is_none()
        && plan.ramp.is_none()
        && plan.shard.is_none()
        && plan.start_at.is_none()
        && plan.think_time.is_none()
        && plan.target_options.setup.is_none()
}

/// When `plan` compares ([`compares`]): the comparison, said on stderr
/// unless `quiet`, its count kept in `plan.threads`.
pub(crate) fn choose(
    plan: &mut Plan,
    cores: usize,
    quiet: bool,
    counters: Option<&dyn CounterReader>,
) -> Result<Option<GeneratorThreads>, Failure> {
    let largest = plan.cells().into_iter().max_by_key(|c| c.concurrency);
    let Some(cell) = largest.filter(|_| compares(plan, cores)) else {
        return Ok(None);
    };
    let g = compare(plan, cell, plan.threads, counters)?;
    // A signal cut the comparison short: the run stops before its first
    // cell, and half a comparison says nothing.
    let cut = poolbench_engine::interrupt::requested().is_some();
    if !quiet && !cut {
        eprintln!("{}", describe(&g, &cell.label()));
    }
    plan.threads = g.threads;
    Ok(Some(g))
}

/// Compare one load thread with `many` on `cell` of `plan`; the
/// comparison, whose `threads` the run then uses. The first run reaches
/// the target first (exit 2 before any load when it cannot).
fn compare(
    plan: &Plan,
    cell: CellSpec,
    many: usize,
    counters: Option<&dyn CounterReader>,
) -> Result<GeneratorThreads, Failure> {
    let mut probe = plan.clone();
    probe.strategies = vec![cell.strategy];
    probe.concurrency = vec![cell.concurrency];
    probe.duration = MEASURE;
    probe.warmup = WARMUP;
    probe.reps = 1;
    probe.pipeline = None;
    probe.slo = None;
    probe.stop_on_slo = false;
    let quiet = Progress::new(1, true, None);
    let (mut one, mut more) = (Vec::new(), Vec::new());
    // A signal ends the comparison; the run then stops before its first
    // cell (exit 130/143).
    let stopped = || poolbench_engine::interrupt::requested().is_some();
    'rounds: for _ in 0..ROUNDS {
        for threads in [many, 1] {
            if stopped() {
                break 'rounds;
            }
            probe.threads = threads;
            let run =
                poolbench_engine::run(&probe, counters, &quiet).map_err(Failure::of_engine)?;
            probe.preflight = false;
            let rps = run.cells.first().map_or(0.0, |c| c.throughput_rps);
            match threads == 1 {
                true => one.push(rps),
                false => more.push(rps),
            }
        }
    }
    Ok(GeneratorThreads {
        threads: faster(&one, many, &more),
        in_flight: cell.concurrency,
        one_rps: mean(&one),
        many,
        many_rps: mean(&more),
    })
}

/// The load threads whose runs carried more on average: `many`, or one
/// when one carried as much or more (or `many` was not measured).
fn faster(one_rps: &[f64], many: usize, many_rps: &[f64]) -> usize {
    match !many_rps.is_empty() && mean(many_rps) > mean(one_rps) {
        true => many,
        false => 1,
    }
}

/// The runs' mean throughput (0 without runs).
fn mean(v: &[f64]) -> f64 {
    match v.is_empty() {
        // Not the empty sum, -0.0, printed "-0".
        true => 0.0,
        false => v.iter().sum::<f64>() / v.len() as f64,
    }
}

/// The comparison in one line, for stderr before the cells.
fn describe(g: &GeneratorThreads, cell: &str) -> String {
    let kept = match g.threads {
        1 => "one load thread".to_string(),
        n => format!("{n} load threads"),
    };
    format!(
        "threads: {kept} (compared on {cell}, {ROUNDS} runs of {}s each: 1 thread {:.0} req/s, {} threads {:.0}; the faster is kept; --threads N sets them)",
        MEASURE.as_secs(),
        g.one_rps,
        g.many,
        g.many_rps
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use poolbench_targets::TargetSpec;
    use std::net::SocketAddr;

    fn plan(d: u64) -> Plan {
        let mut p = Plan::new(TargetSpec::http(SocketAddr::from(([127, 0, 0, 1], 1)), "/"));
        p.duration = Duration::from_secs(d);
        p
    }

    #[test]
    fn the_count_that_carried_more_is_kept_without_a_margin() {
        // MariaDB: two threads 4% ahead, which tune's 5% would not keep.
        assert_eq!(faster(&[69_000.0, 67_000.0], 2, &[72_000.0, 69_500.0]), 2);
        // Pipelining against nginx: one thread well ahead.
        assert_eq!(
            faster(&[133_026.0, 164_258.0], 2, &[106_680.0, 104_454.0]),
            1
        );
        // A tie keeps one thread (a core left to the service).
        assert_eq!(faster(&[100.0, 100.0], 2, &[100.0, 100.0]), 1);
        assert_eq!(faster(&[100.0], 2, &[]), 1);
    }

    #[test]
    fn no_runs_read_zero_not_minus_zero() {
        assert_eq!(format!("{:.0}", mean(&[])), "0");
        assert_eq!(mean(&[1.0, 3.0]), 2.0);
    }

    #[test]
    fn only_closed_loops_of_five_seconds_or_more_on_several_cores_compare() {
        assert!(compares(&plan(5), 2));
        assert!(!compares(&plan(4), 2));
        assert!(!compares(&plan(10), 1));
        let mut counted = plan(10);
        counted.requests = Some(1000);
        assert!(!compares(&counted, 2));
        let mut thinking = plan(10);
        thinking.think_time = Some(Duration::from_millis(100));
        assert!(!compares(&thinking, 2));
        let mut setup = plan(10);
        setup.target_options.setup = Some("CREATE TABLE t (id int)".into());
        assert!(!compares(&setup, 2));
        let mut open = plan(10);
        open.load = LoadModel::Open {
            rate: 1000.0,
            arrival: poolbench_model::Arrival::Constant,
        };
        assert!(!compares(&open, 2));
    }
}
