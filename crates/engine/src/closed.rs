//! Closed loop: each worker acquires, sends, releases, and goes again.
use crate::exchange::{Shared, Window};
use crate::record::Recorder;
use poolbench_targets::Target;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(crate) async fn worker<T: Target>(
    shared: Arc<Shared<T>>,
    id: usize,
    rec: Arc<Mutex<Recorder>>,
) {
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    loop {
        let start = Instant::now();
        if start >= shared.end || shared.budget_spent() {
            return;
        }
        let (outcome, done) = shared.exchange(id, deadline.as_mut(), start).await;
        let latency = outcome.map(|t| t.total()).unwrap_or_default();
        let mut r = rec.lock().unwrap_or_else(|p| p.into_inner());
        if shared.record(&mut r, start, done, outcome, latency) == Window::Outside {
            return;
        }
    }
}
