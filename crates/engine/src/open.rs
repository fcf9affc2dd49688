//! Open loop: requests leave at their intended times whatever the answers;
//! latency counts from the intended time (coordinated omission corrected),
//! and the request time alone is kept as the uncorrected latency.
use crate::exchange::{Shared, Window};
use crate::record::Recorder;
use poolbench_targets::Target;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sent later than this after its intended time, a request counts as late.
const LATE: Duration = Duration::from_millis(1);

/// One of `concurrency` senders; together they cap requests in flight.
pub(crate) async fn worker<T: Target>(
    shared: Arc<Shared<T>>,
    id: usize,
    rec: Arc<Mutex<Recorder>>,
) {
    let Some(schedule) = &shared.schedule else {
        return;
    };
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    loop {
        let intended = schedule.lock().unwrap_or_else(|p| p.into_inner()).next();
        if intended >= shared.end || shared.budget_spent() {
            return;
        }
        let now = Instant::now();
        if intended > now {
            tokio::time::sleep_until(intended.into()).await;
        } else if now - intended > shared.timeout {
            // So far behind that the answer would be a timeout anyway.
            if intended >= shared.measure_from {
                rec.lock().unwrap_or_else(|p| p.into_inner()).dropped += 1;
            }
            continue;
        }
        let start = Instant::now();
        let late = start.saturating_duration_since(intended) > LATE;
        let (outcome, done) = shared.exchange(id, deadline.as_mut(), start).await;
        let mut r = rec.lock().unwrap_or_else(|p| p.into_inner());
        if late && intended >= shared.measure_from {
            r.late += 1;
        }
        if shared.record(&mut r, start, done, outcome, done - intended) == Window::Outside {
            return;
        }
    }
}
