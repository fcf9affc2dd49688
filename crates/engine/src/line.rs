//! Closed loop at `pool:N` with more workers than connections: N loops
//! run, one per connection, and the other workers wait in one FIFO line,
//! each kept as the time it began waiting. A loop that finishes a request
//! puts its worker at the back of the line and sends the request of the
//! one at the front, whose checkout wait is the time it spent in line.
//!
//! This is what a FIFO pool does with c workers and N connections, less a
//! task woken and another parked for every request: at 200,000 requests a
//! second that hand-off alone cost PostgreSQL `SELECT 1` on 2 connections
//! a sixth of its throughput with 8 workers against 2, and the pool under
//! test is not meant to be what is measured. A worker that waits longer
//! than the checkout timeout gives up as a pool waiter would (a
//! `checkout_timeout` error at that time) and joins the line again.
use poolbench_model::{CellSpec, LoadModel, Plan, StrategySpec};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The workers waiting for a connection, as when each began to wait.
pub(crate) struct Line {
    /// Loops that run requests: the pool's size.
    pub(crate) runners: usize,
    waiting: Mutex<VecDeque<Instant>>,
    /// The pool's checkout timeout.
    give_up: Duration,
}

impl Line {
    /// A line for this cell, if its load fits one: our own `pool:N`, a
    /// closed loop without ramp, think time or nested checkouts, and more
    /// workers than connections.
    pub(crate) fn fits(cell: &CellSpec, plan: &Plan, origin: Instant) -> Option<Line> {
        let StrategySpec::Pool(Some(n)) = cell.strategy else {
            return None;
        };
        let plain = matches!(plan.load, LoadModel::Closed)
            && plan.ramp.is_none()
            && plan.think_time.is_none_or(|t| t.is_zero())
            && !plan.nested
            && !plan.pool.checkout_timeout.is_zero();
        (plain && n > 0 && n < cell.concurrency).then(|| Line {
            runners: n,
            waiting: Mutex::new(std::iter::repeat_n(origin, cell.concurrency - n).collect()),
            give_up: plan.pool.checkout_timeout,
        })
    }

    /// The worker served last (done at `done`) goes to the back; the one
    /// at the front comes out: when it began waiting. Workers at the front
    /// that waited past the checkout timeout by `done` gave up: each such
    /// wait's start is pushed onto `gave_up`, and the worker waits again
    /// from when it gave up.
    pub(crate) fn pass(&self, done: Instant, gave_up: &mut Vec<Instant>) -> Instant {
        let mut line = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        self.give_up_until(&mut line, done, gave_up);
        line.push_back(done);
        line.pop_front().unwrap_or(done)
    }

    /// At the end: the waits that passed the checkout timeout by `end`.
    pub(crate) fn gave_up_by(&self, end: Instant) -> Vec<Instant> {
        let mut line = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let mut gave_up = Vec::new();
        self.give_up_until(&mut line, end, &mut gave_up);
        gave_up
    }

    fn give_up_until(
        &self,
        line: &mut VecDeque<Instant>,
        now: Instant,
        gave_up: &mut Vec<Instant>,
    ) {
        while let Some(&front) = line.front() {
            let at = front + self.give_up;
            if at > now {
                break;
            }
            line.pop_front();
            gave_up.push(front);
            // Back in line from when it gave up, behind those who were
            // already waiting then.
            let i = line.partition_point(|&t| t <= at);
            line.insert(i, at);
        }
    }

    /// How long the line gives a worker before it gives up.
    pub(crate) fn give_up(&self) -> Duration {
        self.give_up
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(waiting: usize, give_up_ms: u64, at: Instant) -> Line {
        Line {
            runners: 1,
            waiting: Mutex::new(std::iter::repeat_n(at, waiting).collect()),
            give_up: Duration::from_millis(give_up_ms),
        }
    }

    #[test]
    fn workers_are_served_in_the_order_they_began_to_wait() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let l = line(0, 1000, t0);
        let mut gave_up = Vec::new();
        // Alone in line: the worker just served goes again at once.
        assert_eq!(l.pass(ms(1), &mut gave_up), ms(1));
        l.waiting.lock().unwrap().extend([ms(2), ms(3)]);
        assert_eq!(l.pass(ms(4), &mut gave_up), ms(2));
        assert_eq!(l.pass(ms(5), &mut gave_up), ms(3));
        assert_eq!(l.pass(ms(6), &mut gave_up), ms(4));
        assert!(gave_up.is_empty());
    }

    #[test]
    fn a_wait_past_the_checkout_timeout_gives_up_and_waits_again() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let l = line(2, 100, t0);
        let mut gave_up = Vec::new();
        // At 250 ms both waiting since 0 gave up at 100 (and are back in
        // line from then); they give up again at 200.
        let next = l.pass(ms(250), &mut gave_up);
        assert_eq!(gave_up, [t0, t0, ms(100), ms(100)]);
        assert_eq!(next, ms(200));
        assert_eq!(l.gave_up_by(ms(260)), Vec::<Instant>::new());
        assert_eq!(l.gave_up_by(ms(300)), [ms(200)]);
    }
}
