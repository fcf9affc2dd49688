//! Closed loop: each worker acquires, sends, releases, and goes again.
use crate::exchange::{Shared, Window};
use crate::shards::Shards;
use poolbench_targets::Target;
use std::sync::Arc;
use std::time::Instant;

pub(crate) async fn worker<T: Target>(shared: Arc<Shared<T>>, id: usize, shards: Arc<Shards>) {
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    loop {
        let start = Instant::now();
        if start >= shared.end || shared.budget_spent() {
            return;
        }
        let (outcome, done) = shared.exchange(id, deadline.as_mut(), start).await;
        let latency = outcome.map(|t| t.total()).unwrap_or_default();
        if shards.with(|r| shared.record(r, start, done, outcome, latency)) == Window::Outside {
            return;
        }
    }
}
