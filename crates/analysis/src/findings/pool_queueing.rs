//! `pool-queueing`: more concurrent requests than the pool's connections,
//! so part of the latency is the wait for one.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::PoolQueueing,
    title: "concurrency above pool capacity: part of the latency is waiting for a connection",
    find,
};

/// Share of the mean latency spent waiting for a connection that counts.
const WAIT_SHARE: f64 = 0.05;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let load = match run.closed {
            true => c.concurrency as f64,
            false => c.achieved_concurrency,
        };
        let Some(cap) = c.connection_cap else {
            continue;
        };
        let share = match c.latency_us.mean > 0.0 {
            true => c.checkout_wait_us.mean / c.latency_us.mean,
            false => 0.0,
        };
        // A wait for a stream the server would not allow is its own finding.
        let streams = super::streams_capped::capped(c, run.closed).is_some();
        if load > cap as f64 && share >= WAIT_SHARE && !streams {
            out.push(Evidence::cell(
                c,
                format!(
                    "{load:.0} concurrent on {cap} connection{}, {:.0}% of latency waiting for one ({} of {})",
                    if cap == 1 { "" } else { "s" },
                    share * 100.0,
                    ms(c.checkout_wait_us.mean),
                    ms(c.latency_us.mean)
                ),
            ));
        }
    }
    out
}
