//! The queue of checkouts waiting for an exclusive connection, and who
//! gets the next one given back.
//!
//! In arrival order, with one exception that keeps a connection on its
//! thread: on a current-thread runtime, a connection given back goes to the
//! oldest waiter on the same thread, while the oldest waiter of all has
//! been passed over fewer than [`MAX_PASSED`] times. On load threads that
//! each run a current-thread runtime with an I/O driver (the engine's
//! closed loop for PostgreSQL and Redis), a connection handed to a task on
//! another thread wakes that thread (a futex, often a context switch) and
//! moves its socket to that thread's driver, while the connection sits
//! unused; handed over on the same thread, the next holder runs as soon as
//! the giver yields. Each thread then serves its own waiters in order with
//! the connections it holds; a thread short of connections gets one after
//! at most `MAX_PASSED` handoffs, so the connections spread to where the
//! waiters are and no waiter waits unboundedly. On a multi-thread runtime,
//! which moves tasks between its threads and runs a task woken by another
//! on the waker's thread anyway, the order is plain FIFO.
use crate::tracked::{this_thread, Tracked};
use std::collections::VecDeque;
use tokio::sync::oneshot;

/// What a waiter is handed: a connection, or only the right to open one.
pub(crate) type Handoff<T> = Option<Box<Tracked<T>>>;

/// How many handoffs may pass over the oldest waiter, each to a younger
/// one on the giving thread, before it is served whatever thread gives.
pub(crate) const MAX_PASSED: u32 = 8;

/// How far into the queue a handoff looks for a waiter on its own thread.
const LOCAL_SCAN: usize = 64;

/// Waiting checkouts, oldest first.
pub(crate) struct Queue<T> {
    waiters: VecDeque<Waiter<T>>,
    /// Handoffs that passed over the oldest waiter while it was oldest.
    passed: u32,
}

/// A checkout in the queue: its task, its thread where it runs on a
/// current-thread runtime (0 elsewhere), and where to hand it a connection.
struct Waiter<T> {
    task: u64,
    thread: u64,
    tx: oneshot::Sender<Handoff<T>>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            waiters: VecDeque::new(),
            passed: 0,
        }
    }
}

impl<T> Queue<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    /// Queue a checkout of `task`; it is handed its connection (or the
    /// right to open one) on the receiver.
    pub(crate) fn push(&mut self, task: u64) -> oneshot::Receiver<Handoff<T>> {
        let (tx, rx) = oneshot::channel();
        self.waiters.push_back(Waiter {
            task,
            thread: local_thread(),
            tx,
        });
        rx
    }

    /// Hand `conn` (or, when `None`, the right to open one) to a waiter
    /// that still waits, recording it as the connection's holder in
    /// `holders`; given back when none waits.
    pub(crate) fn hand_over(
        &mut self,
        mut conn: Handoff<T>,
        holders: &mut [u64],
    ) -> Result<(), Handoff<T>> {
        while !self.waiters.is_empty() {
            let i = self.next();
            let w = self.waiters.remove(i).expect("an index into the queue");
            if let Some(h) = conn.as_ref().and_then(|t| t.holder) {
                holders[h] = w.task;
            }
            let sent = w.tx.send(conn);
            // The oldest waiter served or gone: the next one starts afresh.
            match i {
                0 => self.passed = 0,
                _ if sent.is_ok() => self.passed += 1,
                _ => {}
            }
            match sent {
                Ok(()) => return Ok(()),
                // That waiter gave up; try the next.
                Err(back) => conn = back,
            }
        }
        Err(conn)
    }

    /// Which waiter gets the next handoff: the oldest one on this thread
    /// (within [`LOCAL_SCAN`]) while the oldest of all has been passed over
    /// fewer than [`MAX_PASSED`] times, else the oldest of all.
    fn next(&self) -> usize {
        if self.passed >= MAX_PASSED || self.waiters.front().is_none_or(|w| w.thread == 0) {
            return 0;
        }
        let me = local_thread();
        self.waiters
            .iter()
            .take(LOCAL_SCAN)
            .position(|w| w.thread == me)
            .unwrap_or(0)
    }
}

/// This thread, for handing connections over on it: its number on a
/// current-thread runtime, 0 elsewhere.
fn local_thread() -> u64 {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::CurrentThread) => this_thread(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poolbench_pool_types::PoolConfig;

    type Rx = oneshot::Receiver<Handoff<usize>>;

    /// A queue of waiters on the given threads, oldest first, with their
    /// receivers (each waiter's task number is its place in the queue).
    fn queue(threads: &[u64]) -> (Queue<usize>, Vec<Rx>) {
        let mut q = Queue::default();
        let mut rxs = Vec::new();
        for (i, &thread) in threads.iter().enumerate() {
            let (tx, rx) = oneshot::channel();
            q.waiters.push_back(Waiter {
                task: i as u64,
                thread,
                tx,
            });
            rxs.push(rx);
        }
        (q, rxs)
    }

    fn conn(n: usize) -> Handoff<usize> {
        Some(Tracked::boxed(n, &PoolConfig::default(), None))
    }

    /// Which waiters were handed something since last asked, by place.
    fn served(rxs: &mut [Rx]) -> Vec<usize> {
        (0..rxs.len())
            .filter(|&i| rxs[i].try_recv().is_ok())
            .collect()
    }

    fn on_current_thread(test: impl FnOnce()) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let _entered = rt.enter();
        test();
    }

    #[test]
    fn a_handoff_goes_to_the_oldest_waiter_on_its_own_thread() {
        on_current_thread(|| {
            let (me, other) = (this_thread(), this_thread() + 1_000_000);
            let (mut q, mut rxs) = queue(&[other, other, me, me]);
            assert!(q.hand_over(conn(1), &mut []).is_ok());
            assert_eq!(served(&mut rxs), vec![2]);
            assert_eq!(q.passed, 1);
            assert!(q.hand_over(conn(2), &mut []).is_ok());
            assert_eq!(served(&mut rxs), vec![3]);
            // None left on this thread: the oldest of all.
            assert!(q.hand_over(conn(3), &mut []).is_ok());
            assert_eq!(served(&mut rxs), vec![0]);
            assert_eq!(q.passed, 0);
        });
    }

    #[test]
    fn the_oldest_waiter_is_passed_over_at_most_max_passed_times() {
        on_current_thread(|| {
            let (me, other) = (this_thread(), this_thread() + 1_000_000);
            let mut threads = vec![other];
            threads.extend([me; 2 * MAX_PASSED as usize]);
            let (mut q, mut rxs) = queue(&threads);
            let mut order = Vec::new();
            for n in 0..=MAX_PASSED as usize {
                assert!(q.hand_over(conn(n), &mut []).is_ok());
                order.extend(served(&mut rxs));
            }
            let expected: Vec<usize> = (1..=MAX_PASSED as usize).chain([0]).collect();
            assert_eq!(order, expected);
        });
    }

    #[test]
    fn off_a_current_thread_runtime_waiters_are_served_in_arrival_order() {
        // Waiters queued outside a current-thread runtime carry no thread.
        let (mut q, mut rxs) = queue(&[0, 0, 0]);
        for n in 0..3 {
            assert!(q.hand_over(conn(n), &mut []).is_ok());
            assert_eq!(served(&mut rxs), vec![n]);
        }
    }

    #[test]
    fn a_waiter_that_gave_up_is_skipped_and_the_connection_comes_back_when_none_waits() {
        on_current_thread(|| {
            let me = this_thread();
            let (mut q, mut rxs) = queue(&[me, me]);
            drop(rxs.remove(0));
            assert!(q.hand_over(conn(1), &mut []).is_ok());
            assert_eq!(served(&mut rxs), vec![0]);
            let back = q.hand_over(conn(2), &mut []).expect_err("nobody waits");
            assert_eq!(back.map(|t| t.conn), Some(2));
        });
    }
}
