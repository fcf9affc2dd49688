//! Open loop: requests leave at their intended times whatever the answers;
//! latency counts from the intended time (coordinated omission corrected),
//! and the request time alone is kept as the uncorrected latency.
//!
//! A pacing thread of its own sleeps to each intended time to the
//! microsecond (`precise`) and then spawns that one request on the load
//! runtime, so only requests whose time has come are in flight or waiting
//! for a connection. How late each one starts (the send lag) is recorded.
use crate::exchange::{Shared, Window};
use crate::precise_sleep::{sleep_until, tighten_timer_slack};
use crate::schedule::Schedule;
use crate::thread_recorders::ThreadRecorders;
use poolbench_targets::Target;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// Sent later than this after its intended time, a request counts as late.
const LATE: Duration = Duration::from_millis(1);
/// How often the pacer looks again while the in-flight cap is reached.
const CAP_POLL: Duration = Duration::from_micros(20);

/// What the pacer hands back when the schedule is done: the requests still
/// in flight, and those it did not send.
pub(crate) struct Paced {
    pub(crate) inflight: JoinSet<()>,
    /// Measured requests not sent, being a timeout behind schedule.
    pub(crate) dropped: u64,
}

/// Start pacing `schedule` on a thread of its own; requests run on
/// `runtime`, at most `cap` at once. The receiver yields when the last
/// intended time before the cell's end has been sent (or dropped).
pub(crate) fn start<T: Target>(
    shared: Arc<Shared<T>>,
    recorders: Arc<ThreadRecorders>,
    schedule: Schedule,
    cap: usize,
    runtime: Handle,
) -> std::io::Result<oneshot::Receiver<Paced>> {
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("poolbench-pacer".into())
        .spawn(move || {
            let paced = pace(&shared, &recorders, schedule, cap.max(1), &runtime);
            let _ = tx.send(paced);
        })?;
    Ok(rx)
}

fn pace<T: Target>(
    shared: &Arc<Shared<T>>,
    recorders: &Arc<ThreadRecorders>,
    mut schedule: Schedule,
    cap: usize,
    runtime: &Handle,
) -> Paced {
    tighten_timer_slack();
    let mut paced = Paced {
        inflight: JoinSet::new(),
        dropped: 0,
    };
    let mut seq = 0usize;
    loop {
        let intended = schedule.next();
        if intended >= shared.end || shared.budget_spent() {
            return paced;
        }
        sleep_until(intended);
        if crate::interrupt::requested().is_some() {
            return paced;
        }
        reap(&mut paced.inflight);
        while paced.inflight.len() >= cap
            && Instant::now() < shared.end
            && crate::interrupt::requested().is_none()
        {
            std::thread::sleep(CAP_POLL);
            reap(&mut paced.inflight);
        }
        if Instant::now() >= shared.end {
            // Still capped at the end: nothing more can be measured.
            return paced;
        }
        if Instant::now().saturating_duration_since(intended) > shared.timeout {
            // So far behind that the answer would be a timeout anyway.
            if intended >= shared.measure_from {
                paced.dropped += 1;
            }
            continue;
        }
        let task = request(shared.clone(), recorders.clone(), seq % cap, intended);
        paced.inflight.spawn_on(task, runtime);
        seq = seq.wrapping_add(1);
    }
}

/// Forget requests that have finished.
fn reap(set: &mut JoinSet<()>) {
    while set.try_join_next().is_some() {}
}

/// One request, sent now, meant for `intended`.
async fn request<T: Target>(
    shared: Arc<Shared<T>>,
    recorders: Arc<ThreadRecorders>,
    key: usize,
    intended: Instant,
) {
    let start = Instant::now();
    let lag = start.saturating_duration_since(intended);
    let mut deadline = Box::pin(tokio::time::sleep(shared.timeout));
    // Boxed, so the task the pacer spawns is small: the exchange's state
    // (kilobytes) is allocated and moved on the load thread, not the pacer.
    let (outcome, done) = Box::pin(shared.exchange(key, None, deadline.as_mut(), start)).await;
    recorders.with(|r| {
        if shared.record(r, start, done, outcome, done - intended) == Window::Measured {
            let _ = r.send_lag.record(lag.as_nanos() as u64);
            if lag > LATE {
                r.late += 1;
            }
        }
    });
}
