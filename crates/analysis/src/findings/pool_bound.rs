//! `pool-bound`: the pool set the throughput. In a closed loop with more
//! workers than the pool has connections, each connection serves one
//! request after another, so throughput is the pool size ÷ the request
//! time, and the workers beyond the pool wait for a connection.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, StrategySpec};

pub(crate) const CHECK: Check = Check {
    id: Id::PoolBound,
    title: "the pool was the bottleneck: throughput is pool size ÷ request time",
    find,
};

/// How near throughput must be to pool size ÷ mean request time.
const NEAR: f64 = 0.15;
/// Least share of the mean latency spent waiting for a connection.
const WAIT_SHARE: f64 = 0.3;

/// The pool's size, when `c` leases each connection to one worker at a
/// time and has fewer connections than workers.
fn exclusive_cap(c: &CellResult) -> Option<usize> {
    let spec: StrategySpec = c.strategy.parse().ok()?;
    let cap = c.connection_cap?;
    (!spec.shares_connections() && cap > 0 && c.concurrency > cap).then_some(cap)
}

/// Do `throughput_rps`, against `limit_rps` (pool size ÷ mean request
/// time), and `wait_share` (of latency spent waiting for a connection) show
/// the pool as the bottleneck?
pub fn shows(throughput_rps: f64, limit_rps: f64, wait_share: f64) -> bool {
    (throughput_rps / limit_rps - 1.0).abs() <= NEAR && wait_share >= WAIT_SHARE
}

/// Does `c` show its pool as the bottleneck? Its throughput against
/// pool size ÷ request time, and the share of latency spent waiting.
pub(crate) fn bound(c: &CellResult) -> Option<(usize, f64)> {
    let cap = exclusive_cap(c)?;
    if c.ok == 0 || c.request_us.mean <= 0.0 || c.latency_us.mean <= 0.0 {
        return None;
    }
    let limit = cap as f64 / (c.request_us.mean / 1e6);
    let share = c.checkout_wait_us.mean / c.latency_us.mean;
    shows(c.throughput_rps, limit, share).then_some((cap, share))
}

/// The run tried a larger pool of `c`'s kind at `c`'s concurrency, and it
/// served no more: a larger pool would not serve more after all.
fn larger_served_no_more(run: &Run, c: &CellResult) -> bool {
    run.cells().any(|o| {
        super::pool_beyond_client::smaller_as_good(std::iter::once(c), o)
            .is_some_and(|s| std::ptr::eq(s, c))
    })
}

fn find(run: &Run) -> Vec<Evidence> {
    if !run.closed {
        return Vec::new();
    }
    run.cells()
        .filter_map(|c| {
            let (cap, share) = bound(c)?;
            if larger_served_no_more(run, c) {
                // `pool-beyond-client` says where the limit is.
                return None;
            }
            Some(Evidence::cell(
                c,
                format!(
                    "{:.0} req/s ≈ {cap} connection{} ÷ {} per request; {:.0}% of latency \
                     waiting for a connection: the pool, not the service, set the throughput; \
                     a larger pool would serve more",
                    c.throughput_rps,
                    if cap == 1 { "" } else { "s" },
                    ms(c.request_us.mean),
                    share * 100.0
                ),
            ))
        })
        .collect()
}
