//! Closed loop: each worker acquires, sends, releases, pauses for
//! `--think-time` if there is one, and goes again (at `pool:N` with more
//! workers than connections, N loops serve the workers in a line:
//! `line.rs`). A worker whose requests
//! keep failing to reach the target (refused, reset) backs off before the
//! next, so a dead target costs no CPU.
use crate::exchange::{Shared, Window};
use crate::thread_recorders::ThreadRecorders;
use poolbench_targets::{ErrorKind, Target};
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest pause between attempts on an unreachable target.
const MAX_BACKOFF: Duration = Duration::from_millis(100);

pub(crate) async fn worker<T: Target>(
    shared: Arc<Shared<T>>,
    id: usize,
    recorders: Arc<ThreadRecorders>,
) {
    let deadline = tokio::time::sleep(shared.timeout);
    tokio::pin!(deadline);
    let mut unreachable = 0u32;
    // This worker's turn at `round-robin:N`: its requests go to the
    // connections one after another, from its own number on.
    let mut turn = id;
    // With a line: when the worker this loop serves next began to wait.
    let mut waited_from: Option<Instant> = None;
    let mut gave_up = Vec::new();
    // The clock reading that ended the last request, when the worker went
    // straight on: the next one starts there (recording the last, well
    // under a microsecond, counts in its checkout wait) without reading
    // the clock again.
    let mut went_on: Option<Instant> = None;
    loop {
        let now = went_on.take().unwrap_or_else(Instant::now);
        let mut start = waited_from.take().unwrap_or(now);
        if now >= shared.end || shared.budget_spent() {
            return;
        }
        if let Some(ramp) = &shared.ramp {
            // Run only while the ramp is above this worker's number.
            let t = start.saturating_duration_since(shared.measure_from);
            match ramp.next_active(id, t.as_secs_f64()) {
                Some(at) if at <= t.as_secs_f64() => {}
                Some(at) => {
                    let wake = shared.measure_from + std::time::Duration::from_secs_f64(at);
                    tokio::time::sleep_until(wake.min(shared.end).into()).await;
                    continue;
                }
                None => return,
            }
            start = Instant::now();
        }
        let (outcome, done) = shared
            .exchange(id, Some(turn), deadline.as_mut(), start)
            .await;
        turn = turn.wrapping_add(1);
        let latency = outcome.as_ref().map(|t| t.total()).unwrap_or_default();
        let down =
            matches!(&outcome, Err(f) if matches!(f.kind, ErrorKind::Refused | ErrorKind::Reset));
        if recorders.with(|r| shared.record(r, start, done, outcome, latency)) == Window::Outside {
            return;
        }
        if !shared.think.is_zero() {
            // The pause a real client makes between requests; its
            // connection sits idle in the pool meanwhile.
            let wake = (Instant::now() + shared.think).min(shared.end);
            tokio::time::sleep_until(wake.into()).await;
        }
        if let Some(line) = &shared.line {
            // This worker to the back of the line, the oldest waiting next.
            let next = line.pass(done, &mut gave_up);
            shared.gave_up(&recorders, &mut gave_up);
            if next < done {
                shared.strategy.waited_in_line(done - next);
            }
            waited_from = Some(next);
        }
        unreachable = if down { unreachable + 1 } else { 0 };
        if unreachable > 1 {
            let pause =
                backoff(unreachable).min(shared.end.saturating_duration_since(Instant::now()));
            tokio::time::sleep(pause).await;
        } else if shared.think.is_zero() && shared.line.is_none() && shared.ramp.is_none() {
            went_on = Some(done);
        }
    }
}

/// Exponential from 1 ms, capped at [`MAX_BACKOFF`], jittered to 50–100%
/// so the workers do not retry in step.
fn backoff(failures: u32) -> Duration {
    let full = Duration::from_millis(1 << failures.saturating_sub(2).min(7)).min(MAX_BACKOFF);
    full.mul_f64(rand::rng().random_range(0.5..=1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_jitter() {
        assert!(backoff(2) <= Duration::from_millis(1));
        assert!(backoff(5) <= Duration::from_millis(8) && backoff(5) >= Duration::from_millis(4));
        for n in [9, 20, u32::MAX] {
            let b = backoff(n);
            assert!(b <= MAX_BACKOFF && b >= MAX_BACKOFF / 2, "{n}: {b:?}");
        }
    }
}
