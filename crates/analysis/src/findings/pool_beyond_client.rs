//! `pool-beyond-client`: a larger client pool served no more, its workers
//! did not wait for a connection, and each request took longer once it had
//! one: the requests queue beyond the client. A pool in between (a proxy's,
//! such as PgBouncer's `default_pool_size`) or the server's own limit sets
//! the throughput, serving about throughput × the unqueued request time at
//! once (Little's law); the client's pool does not. The checkout wait has
//! moved from the client into the proxy, where it shows as request time.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, StrategySpec};

pub(crate) const CHECK: Check = Check {
    id: Id::PoolBeyondClient,
    title: "a pool beyond the client set the throughput (a proxy's pool, e.g. PgBouncer's, \
            or the server's limit): a larger client pool served no more",
    find,
};

/// A larger pool's throughput at most this much above a smaller one's
/// (and at most [`FLAT_PER_SIZE`] of its growth in connections) is "no
/// more": a 4× larger pool serving 20% more gains almost nothing, while
/// two runs on a busy machine differ by 10% alone.
const FLAT: f64 = 0.20;
/// Most throughput gained per connection added, as shares.
const FLAT_PER_SIZE: f64 = 0.25;
/// Most share of the larger pool's latency spent waiting for a client
/// connection.
const WAIT_SHARE: f64 = 0.10;
/// Least growth of the request time (connection in hand to answer).
const SLOWER: f64 = 1.5;

/// The exclusive pool's size and kind (`pool`, `elastic`, …).
fn exclusive(c: &CellResult) -> Option<(usize, &'static str)> {
    let spec: StrategySpec = c.strategy.parse().ok()?;
    let cap = c.connection_cap?;
    (!spec.shares_connections() && cap > 0 && c.ok > 0).then(|| (cap, spec.kind()))
}

/// The smallest pool of `c`'s kind at `c`'s concurrency that served as
/// much as `c` within [`FLAT`], if smaller than `c`'s.
pub(crate) fn smaller_as_good<'a>(
    cells: impl Iterator<Item = &'a CellResult>,
    c: &CellResult,
) -> Option<&'a CellResult> {
    let (cap, kind) = exclusive(c)?;
    cells
        .filter(|o| o.concurrency == c.concurrency)
        .filter_map(|o| exclusive(o).map(|(n, k)| (o, n, k)))
        .filter(|(o, n, k)| {
            let grown = cap as f64 / *n as f64 - 1.0;
            let flat = FLAT.min(FLAT_PER_SIZE * grown);
            *k == kind && *n < cap && c.throughput_rps <= o.throughput_rps * (1.0 + flat)
        })
        .min_by_key(|(_, n, _)| *n)
        .map(|(o, _, _)| o)
}

fn find(run: &Run) -> Vec<Evidence> {
    if !run.closed {
        return Vec::new();
    }
    run.cells()
        .filter_map(|c| {
            let small = smaller_as_good(run.cells(), c)?;
            let share = c.checkout_wait_us.mean / c.latency_us.mean.max(1.0);
            let base = small.request_us.mean;
            if share > WAIT_SHARE || base <= 0.0 || c.request_us.mean < base * SLOWER {
                return None;
            }
            let at_once = c.throughput_rps * base / 1e6;
            Some(Evidence::cell(
                c,
                format!(
                    "{:.0} req/s, no more than {}'s {:.0}, with {:.0}% of latency waiting for \
                     a client connection; each request took {} against {}: requests queue \
                     beyond the client, which is served about {at_once:.0} at a time — the \
                     limit is a pool in between (a proxy's pool, e.g. PgBouncer's \
                     default_pool_size) or the server's, not the client's pool",
                    c.throughput_rps,
                    small.strategy,
                    small.throughput_rps,
                    share * 100.0,
                    ms(c.request_us.mean),
                    ms(base),
                ),
            ))
        })
        .collect()
}
