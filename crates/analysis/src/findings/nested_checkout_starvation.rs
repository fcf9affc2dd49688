//! `nested-checkout-starvation`: inside a poolbench service (`serve
//! --db`), handlers holding one database connection wait for a second from
//! the same pool, read from the server's counters.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::NestedCheckoutStarvation,
    title: "nested-checkout starvation in the service: handlers holding one database connection wait for a second from the same pool, so the pool deadlocks until the checkout timeout",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let Some(db) = c.server.and_then(|s| s.db_pool) else {
            continue;
        };
        let tasks = match db.peak_requests {
            0 => c.concurrency as u64,
            n => n.min(c.concurrency as u64),
        };
        let cap = db.size + db.overflow;
        let needed = db.deadlock_free_minimum(tasks);
        // Waits while connections open are harmless when the pool is big
        // enough; timeouts, or nested waits in a pool too small, are not.
        let starved = db.timeouts > 0 || (db.nested_waits > 0 && cap < needed);
        if db.per_request <= 1 || !starved {
            continue;
        }
        let short = match cap < needed {
            true => format!(" (the pool is {} short)", needed - cap),
            false => String::new(),
        };
        out.push(Evidence::cell(
            c,
            format!(
                "database pool {}+{} = {cap} connections, {tasks} concurrent requests each holding {}: {} nested waits, {} checkout timeouts, peak {} in use; deadlock-free needs T×(C−1)+1 = {tasks}×({}−1)+1 = {needed}{short}",
                db.size,
                db.overflow,
                db.per_request,
                db.nested_waits,
                db.timeouts,
                db.peak_in_use,
                db.per_request,
            ),
        ));
    }
    out
}
