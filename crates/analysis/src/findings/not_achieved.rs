//! `not-achieved`: the load did not reach what was asked: connections not
//! all opened, fewer seen by the server, a rate not kept, or fewer
//! concurrent requests than workers (Little's law).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;
use poolbench_model::StrategySpec;

pub(crate) const CHECK: Check = Check {
    id: Id::NotAchieved,
    title: "the load did not reach what was asked",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    // A ramp asks for a concurrency that changes: its peak is not a
    // target every second should reach.
    for c in run.cells().filter(|c| c.ramp.is_none()) {
        for why in shortfalls(c, run.closed) {
            out.push(Evidence::cell(c, why));
        }
    }
    out
}

fn shortfalls(c: &CellResult, closed: bool) -> Vec<String> {
    let mut out = Vec::new();
    let fills_cap = matches!(
        c.strategy.parse::<StrategySpec>(),
        Ok(StrategySpec::Pool(_)
            | StrategySpec::RoundRobin(_)
            | StrategySpec::LeastLoaded(_)
            | StrategySpec::Shared
            | StrategySpec::Partitioned(..)
            | StrategySpec::Pipeline(..))
    );
    if let Some(cap) = c
        .connection_cap
        .filter(|&cap| fills_cap && closed && c.concurrency >= cap)
    {
        if c.connections.peak_open < cap as u64 {
            out.push(format!(
                "{cap} connections asked for, at most {} open",
                c.connections.peak_open
            ));
        }
    }
    if let Some(s) = c.server {
        if s.connections_peak < c.connections.peak_open {
            out.push(format!(
                "client had {} connections open, the server saw at most {}",
                c.connections.peak_open, s.connections_peak
            ));
        }
    }
    if let Some(rate) = c.requested_rate {
        if c.achieved_rate < 0.95 * rate {
            out.push(format!(
                "{rate:.0} req/s asked for, {:.1} achieved ({} late, {} dropped)",
                c.achieved_rate, c.late, c.dropped
            ));
        }
    }
    if closed && c.ok > 0 && c.achieved_concurrency < 0.9 * c.concurrency as f64 {
        out.push(format!(
            "Little's law gives {:.1} concurrent (throughput × mean latency) against c={}",
            c.achieved_concurrency, c.concurrency
        ));
    }
    out
}
