//! `reconnects`: a reusing strategy reopened connections while measuring,
//! and who closed them. A request that timed out leaves its connection in
//! an unknown state, so the client closes it (`closed_abandoned`, counted
//! among the broken); the rest of the broken ones the server closed (end
//! of stream, reset); idle timeout and lifetime are the pool's.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;
use poolbench_model::StrategySpec;

pub(crate) const CHECK: Check = Check {
    id: Id::Reconnects,
    title: "connections were reopened while measuring (each line says who closed them)",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| reuses(c) && c.reopened > 0)
        .map(|c| {
            Evidence::cell(
                c,
                format!(
                    "{} connections reopened while measuring; closed: {}",
                    c.reopened,
                    who_closed(c).join(", ")
                ),
            )
        })
        .collect()
}

/// The strategy keeps connections for more than one request.
fn reuses(c: &CellResult) -> bool {
    !matches!(
        c.strategy.parse::<StrategySpec>(),
        Ok(StrategySpec::PerRequest | StrategySpec::TakeOrCreate(_)) | Err(_)
    )
}

fn who_closed(c: &CellResult) -> Vec<String> {
    let by_client = c.pool.closed_abandoned.min(c.pool.closed_broken);
    let by_server = c.pool.closed_broken - by_client;
    let mut who = Vec::new();
    if by_client > 0 {
        who.push(format!(
            "{by_client} by the client after its own request timeouts"
        ));
    }
    if by_server > 0 {
        who.push(format!(
            "{by_server} by the server (end of stream or reset)"
        ));
    }
    if c.pool.closed_idle > 0 {
        who.push(format!("{} by the pool's idle timeout", c.pool.closed_idle));
    }
    if c.pool.closed_lifetime > 0 {
        who.push(format!(
            "{} by the pool's max lifetime",
            c.pool.closed_lifetime
        ));
    }
    if who.is_empty() {
        who.push("none closed by the client, the server or the pool's limits".into());
    }
    who
}
