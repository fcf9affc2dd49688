//! `streams-capped`: a multiplexed strategy whose requests waited for a
//! stream because the server allows only so many per connection (HTTP/2
//! and gRPC: its `SETTINGS_MAX_CONCURRENT_STREAMS`). More requests in
//! flight than connections × streams wait in the client, whatever the
//! service could take; more connections remove the wait.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, StrategySpec};

pub(crate) const CHECK: Check = Check {
    id: Id::StreamsCapped,
    title: "the server's stream limit per connection held requests back in the client",
    find,
};

/// Least share of the mean latency spent waiting for a stream.
const WAIT_SHARE: f64 = 0.05;

/// The streams a server allowed per connection, the connections, and the
/// requests in flight, when `c`'s requests outnumbered the streams.
pub(crate) fn capped(c: &CellResult, closed: bool) -> Option<(u64, usize, f64)> {
    let spec: StrategySpec = c.strategy.parse().ok()?;
    let limit = c.pool.stream_limit()?;
    let connections = c.connection_cap?.max(1);
    let load = match closed {
        true => c.concurrency as f64,
        false => c.achieved_concurrency,
    };
    let share = match c.latency_us.mean > 0.0 {
        true => c.checkout_wait_us.mean / c.latency_us.mean,
        false => 0.0,
    };
    let over = load > (connections as u64 * limit) as f64;
    (spec.shares_connections() && over && share >= WAIT_SHARE).then_some((limit, connections, load))
}

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter_map(|c| {
            let (limit, n, load) = capped(c, run.closed)?;
            let waited = match c.pool.checkouts {
                0 => 0.0,
                k => c.pool.waited as f64 / k as f64,
            };
            let needed = (load / limit as f64).ceil() as u64;
            Some(Evidence::cell(
                c,
                format!(
                    "the server allows {limit} streams per connection: {load:.0} in flight on \
                     {n} connection{} run {} at once; {:.0}% of requests waited for a stream, \
                     {:.0}% of latency ({} of {}); {needed} connections (⌈{load:.0} ÷ {limit}⌉) \
                     remove the wait",
                    if n == 1 { "" } else { "s" },
                    n as u64 * limit,
                    waited * 100.0,
                    100.0 * c.checkout_wait_us.mean / c.latency_us.mean,
                    ms(c.checkout_wait_us.mean),
                    ms(c.latency_us.mean)
                ),
            ))
        })
        .collect()
}
