//! `target-saturated`: along one strategy's concurrency grid, the first
//! step where throughput stops growing while latency grows, neither cell
//! queueing in the client's own pool: where the target saturates, and the
//! plateau after it (the knee, 95% of the peak, is tune's: `capacity.rs`).
use super::check::{ms, Check, Evidence, Run};
use crate::usl::by_strategy;
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::TargetSaturated,
    title:
        "the target saturated: past a concurrency, throughput stops growing and only latency grows",
    find,
};

/// Throughput must grow by more than this share per step to count as
/// still growing.
const GROWS: f64 = 0.05;
/// Mean latency grown by this share means requests queue somewhere.
const LATENCY_GROWS: f64 = 0.2;
/// A cell whose checkout wait is this share of its latency queues in the
/// client's pool, not at the target.
const CLIENT_QUEUE: f64 = 0.1;

fn queues_in_client(c: &CellResult) -> bool {
    c.latency_us.mean > 0.0 && c.checkout_wait_us.mean >= CLIENT_QUEUE * c.latency_us.mean
}

fn find(run: &Run) -> Vec<Evidence> {
    if !run.closed {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (strategy, cells) in by_strategy(run.result) {
        let saturated = cells.windows(2).find(|w| {
            let (a, b) = (w[0], w[1]);
            b.concurrency > a.concurrency
                && !queues_in_client(a)
                && !queues_in_client(b)
                && b.throughput_rps < (1.0 + GROWS) * a.throughput_rps
                && b.latency_us.mean > (1.0 + LATENCY_GROWS) * a.latency_us.mean
        });
        let Some(w) = saturated else { continue };
        let (a, last) = (w[0], cells[cells.len() - 1]);
        let plateau = cells
            .iter()
            .filter(|c| c.concurrency >= a.concurrency)
            .map(|c| c.throughput_rps)
            .fold(0.0, f64::max);
        out.push(Evidence {
            cell: Some(a.label()),
            line: format!(
                "{strategy}: throughput stops growing at c={} ({:.0} req/s, plateau {plateau:.0}); \
                 from there to c={} mean latency {} → {}",
                a.concurrency,
                a.throughput_rps,
                last.concurrency,
                ms(a.latency_us.mean),
                ms(last.latency_us.mean)
            ),
        });
    }
    out
}
