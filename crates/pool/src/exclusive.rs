//! Exclusive checkout: `pool`, `elastic`, `take-or-create` and
//! `per-request` are one machine with different limits.
//!
//! One lock guards the idle list, the free permits, the FIFO queue of
//! waiters and the hot counters. A returned connection goes straight to a
//! waiter, so a newcomer can never take it first: to the oldest one, or on
//! a current-thread runtime to the oldest one on the same thread (see
//! `handoff`).
use crate::clock::CoarseClock;
use crate::error::AcquireError;
use crate::handoff::{Handoff, Queue};
use crate::holders::current_task;
use crate::metrics::{CloseCause, Metrics};
use crate::tracked::{this_thread, Tracked};
use crate::Connector;
use parking_lot::{Mutex, MutexGuard};
use poolbench_pool_types::PoolConfig;
use poolbench_pool_types::PoolCounters;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

pub(crate) struct Exclusive<C: Connector> {
    pub(crate) connector: C,
    state: Mutex<State<C::Conn>>,
    /// Most leased at once (`usize::MAX`: unbounded).
    size: usize,
    /// Most connections kept idle.
    max_idle: usize,
    /// Connections above this many open are overflow, closed after a grace.
    core: usize,
    pub(crate) clock: CoarseClock,
    pub(crate) config: PoolConfig,
    pub(crate) metrics: Metrics,
}

struct State<T> {
    /// Idle connections, oldest first; checkout takes the newest.
    idle: VecDeque<Box<Tracked<T>>>,
    /// Permits not leased; a free permit with no idle connection connects.
    free: usize,
    /// Waiting checkouts.
    waiters: Queue<T>,
    /// The task holding each tracked connection (0: none).
    holders: Vec<u64>,
    free_indexes: Vec<usize>,
    checkouts: u64,
    in_use: u64,
    peak_in_use: u64,
}

/// How a checkout starts.
pub(crate) enum Begin<T> {
    /// A permit, and an idle connection if there was one.
    Ready(Option<Box<Tracked<T>>>),
    /// In the queue.
    Wait(oneshot::Receiver<Handoff<T>>),
}

impl<C: Connector> Exclusive<C> {
    pub(crate) fn new(
        connector: C,
        limit: Option<usize>,
        max_idle: usize,
        core: usize,
        config: PoolConfig,
    ) -> Self {
        let tracked = limit.unwrap_or(0);
        Exclusive {
            connector,
            state: Mutex::new(State {
                idle: VecDeque::with_capacity(max_idle.min(1024)),
                free: limit.unwrap_or(usize::MAX),
                waiters: Queue::default(),
                holders: vec![0; tracked],
                free_indexes: (0..tracked).rev().collect(),
                checkouts: 0,
                in_use: 0,
                peak_in_use: 0,
            }),
            size: limit.unwrap_or(usize::MAX),
            max_idle,
            core,
            clock: CoarseClock::new(),
            config,
            metrics: Metrics::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<C::Conn>> {
        self.state.lock()
    }

    /// Why an idle connection may not be handed out, if it may not: expired
    /// by `upper` (at least now), idle too long by `lower` (at most now).
    fn unusable(
        &self,
        t: &mut Tracked<C::Conn>,
        lower: Instant,
        upper: Instant,
    ) -> Option<CloseCause> {
        if t.expired(upper) {
            Some(CloseCause::Lifetime)
        } else if self
            .config
            .idle_timeout
            .is_some_and(|l| lower.saturating_duration_since(t.idle_since) >= l)
        {
            Some(CloseCause::Idle)
        } else if self.connector.is_broken(&mut t.conn) {
            Some(CloseCause::Broken)
        } else {
            None
        }
    }

    /// Take a permit and an idle connection, or join the queue. A task that
    /// already holds a connection here and would wait is counted (and
    /// refused with `fail_on_nested`).
    pub(crate) fn begin(&self) -> Result<Begin<C::Conn>, AcquireError<C::Error>> {
        let (lower, upper) = (self.clock.lower(), self.clock.upper());
        let me = current_task();
        let mut closed = Vec::new();
        let begin = {
            let mut s = self.lock();
            if s.free > 0 && s.waiters.is_empty() {
                s.free -= 1;
                s.in_use += 1;
                s.peak_in_use = s.peak_in_use.max(s.in_use);
                let mut conn = None;
                take_home_first(&mut s.idle);
                while let Some(mut t) = s.idle.pop_back() {
                    match self.unusable(&mut t, lower, upper) {
                        Some(cause) => {
                            self.found_closed(&t, cause);
                            closed.push((t, cause));
                        }
                        None => {
                            if let Some(i) = t.holder {
                                s.holders[i] = me;
                            }
                            // Counted here; other checkouts when they end.
                            s.checkouts += 1;
                            conn = Some(t);
                            break;
                        }
                    }
                }
                Begin::Ready(conn)
            } else {
                if me != 0 && s.holders.contains(&me) {
                    self.metrics.nested_wait();
                    if self.config.fail_on_nested {
                        return Err(AcquireError::NestedCheckout { size: self.size });
                    }
                }
                Begin::Wait(s.waiters.push(me))
            }
        };
        self.close_all(closed);
        Ok(begin)
    }

    /// Finish a checkout that could not be had at once: wait in line, then
    /// connect if no usable connection came. Cancel-safe: dropped at any
    /// point, it gives back what it was handed.
    pub(crate) async fn finish(
        self: &Arc<Self>,
        begin: Begin<C::Conn>,
    ) -> Result<(Arc<Self>, Box<Tracked<C::Conn>>), AcquireError<C::Error>> {
        let mut waited = false;
        let handed = match begin {
            Begin::Ready(conn) => conn,
            Begin::Wait(rx) => {
                let started = Instant::now();
                let mut waiting = Waiting {
                    owner: self,
                    rx: Some(rx),
                };
                let handed = waiting.rx.as_mut().expect("set above").await;
                waiting.rx = None;
                self.metrics.waited_for(started.elapsed());
                waited = true;
                // Senders are dropped unsent only with the pool itself.
                handed.unwrap_or(None)
            }
        };
        let mut permit = Permit {
            owner: self,
            armed: true,
        };
        let conn = match handed {
            Some(mut t) => match self.unusable(&mut t, self.clock.lower(), self.clock.upper()) {
                None => Some(t),
                Some(cause) => {
                    self.close_all(vec![(t, cause)]);
                    None
                }
            },
            None => None,
        };
        let conn = match conn {
            Some(t) => t,
            // Boxed: a connect future is as large as the connector's
            // biggest, and every waiting checkout would carry it inline.
            None => Box::pin(self.connect()).await?,
        };
        permit.armed = false;
        self.metrics.count_checkout(waited);
        Ok((self.clone(), conn))
    }

    async fn connect(&self) -> Result<Box<Tracked<C::Conn>>, AcquireError<C::Error>> {
        let started = std::time::Instant::now();
        match self.connector.connect_exclusive().await {
            Ok(conn) => {
                self.metrics.opened();
                self.metrics
                    .advertised(self.connector.advertised_streams(&conn));
                let mut s = self.lock();
                let holder = s.free_indexes.pop();
                if let Some(i) = holder {
                    s.holders[i] = current_task();
                }
                drop(s);
                let mut t = Tracked::boxed(conn, &self.config, holder);
                t.fresh = Some(started.elapsed());
                Ok(t)
            }
            Err(e) => {
                self.metrics.connect_error();
                Err(AcquireError::Connect(e))
            }
        }
    }

    /// A lease ends (`conn` is `None` when it never got a connection): hand
    /// the connection to the oldest waiter, or keep it idle, or close it.
    /// `done` is the holder's own clock reading at the end of its use, if
    /// it made one (else the clock is read here).
    pub(crate) fn checkin(
        &self,
        conn: Option<Box<Tracked<C::Conn>>>,
        broken: bool,
        done: Option<Instant>,
    ) {
        let now = self.clock.upper();
        let mut closed = Vec::new();
        let mut conn = match conn {
            Some(mut t) => {
                let cause = if broken || self.connector.is_broken(&mut t.conn) {
                    Some(CloseCause::Broken)
                } else if t.expired(now) {
                    Some(CloseCause::Lifetime)
                } else {
                    None
                };
                match cause {
                    Some(cause) => {
                        closed.push((t, cause));
                        None
                    }
                    None => Some(t),
                }
            }
            None => None,
        };
        // Closed before the permit moves on, so a replacement never opens
        // while the old connection still exists.
        self.close_all(std::mem::take(&mut closed));
        let mut s = self.lock();
        s.in_use -= 1;
        if let Some(i) = conn.as_ref().and_then(|t| t.holder) {
            s.holders[i] = 0;
        }
        if let Some(t) = conn.as_mut() {
            t.returned = done.unwrap_or_else(Instant::now);
        }
        let State {
            waiters, holders, ..
        } = &mut *s;
        conn = match waiters.hand_over(conn, holders) {
            Ok(()) => {
                s.in_use += 1;
                s.peak_in_use = s.peak_in_use.max(s.in_use);
                return;
            }
            Err(back) => back,
        };
        if let Some(i) = conn.as_ref().and_then(|t| t.holder) {
            s.holders[i] = 0;
        }
        s.free += 1;
        if let Some(mut t) = conn {
            if s.idle.len() < self.max_idle {
                t.idle_since = now;
                t.home = this_thread();
                s.idle.push_back(t);
            } else {
                let cause = if self.max_idle == 0 {
                    CloseCause::Released
                } else {
                    CloseCause::Overflow
                };
                closed.push((t, cause));
            }
        }
        drop(s);
        self.close_all(closed);
        if self.core < self.size && self.metrics.open() > self.core as u64 {
            self.reap();
        }
    }

    /// An idle connection found broken: its server closed it while it sat
    /// idle, counted with how long it had.
    fn found_closed(&self, t: &Tracked<C::Conn>, cause: CloseCause) {
        if cause == CloseCause::Broken {
            self.metrics.closed_while_idle(t.returned.elapsed());
        }
    }

    /// Close connections (outside the lock) and give back their indexes.
    fn close_all(&self, closed: Vec<(Box<Tracked<C::Conn>>, CloseCause)>) {
        if closed.is_empty() {
            return;
        }
        let mut s = self.lock();
        for (t, _) in &closed {
            if let Some(i) = t.holder {
                s.holders[i] = 0;
                s.free_indexes.push(i);
            }
        }
        drop(s);
        for (t, cause) in closed {
            drop(t);
            self.metrics.closed(cause);
        }
    }

    /// Close idle connections past their idle timeout or lifetime, and
    /// overflow connections idle longer than the overflow grace. Also
    /// advances the coarse clock.
    pub(crate) fn reap(&self) {
        self.clock.tick();
        let now = Instant::now();
        let closed = {
            let mut s = self.lock();
            let mut excess = (self.metrics.open() as usize).saturating_sub(self.core);
            let mut kept = VecDeque::with_capacity(s.idle.len());
            let mut closed = Vec::new();
            while let Some(mut t) = s.idle.pop_front() {
                let cause = match self.unusable(&mut t, now, now) {
                    Some(cause) => Some(cause),
                    None if excess > 0
                        && now.saturating_duration_since(t.idle_since)
                            >= self.config.overflow_grace =>
                    {
                        Some(CloseCause::Overflow)
                    }
                    None => None,
                };
                match cause {
                    Some(cause) => {
                        self.found_closed(&t, cause);
                        excess = excess.saturating_sub(1);
                        closed.push((t, cause));
                    }
                    None => kept.push_back(t),
                }
            }
            s.idle = kept;
            closed
        };
        self.close_holding_permits(closed);
    }

    /// Close every idle connection.
    pub(crate) fn close_idle(&self) {
        let drained: Vec<_> = self
            .lock()
            .idle
            .drain(..)
            .map(|t| (t, CloseCause::Released))
            .collect();
        self.close_holding_permits(drained);
    }

    /// Close idle connections taken off the list. While they close, the
    /// permits they would free stay taken, so no replacement opens first.
    fn close_holding_permits(&self, closed: Vec<(Box<Tracked<C::Conn>>, CloseCause)>) {
        let n = closed.len();
        if n == 0 {
            return;
        }
        let bounded = self.size != usize::MAX;
        let held = if bounded {
            let mut s = self.lock();
            let held = n.min(s.free);
            s.free -= held;
            s.in_use += held as u64;
            held
        } else {
            0
        };
        self.close_all(closed);
        for _ in 0..held {
            self.checkin(None, false, None);
        }
    }

    /// Open connections until `min_idle` are idle (capped at what the
    /// strategy keeps idle), each under a permit so the pool never opens
    /// more than its size. Returns how many were opened.
    pub(crate) async fn prefill(&self) -> Result<usize, AcquireError<C::Error>> {
        let want = self.config.min_idle.min(self.max_idle);
        let mut opened = 0;
        loop {
            {
                let mut s = self.lock();
                if s.idle.len() >= want || s.free == 0 || !s.waiters.is_empty() {
                    return Ok(opened);
                }
                s.free -= 1;
                s.in_use += 1;
            }
            let mut permit = Permit {
                owner: self,
                armed: true,
            };
            let mut t = Box::pin(self.connect()).await?;
            t.fresh = None;
            // The connection goes back through checkin, which frees the permit.
            permit.armed = false;
            self.checkin(Some(t), false, None);
            opened += 1;
        }
    }

    pub(crate) fn idle_count(&self) -> usize {
        self.lock().idle.len()
    }

    pub(crate) fn snapshot(&self) -> PoolCounters {
        let mut m = self.metrics.snapshot();
        let s = self.lock();
        m.checkouts += s.checkouts;
        m.in_use = s.in_use;
        m.peak_in_use = s.peak_in_use;
        m
    }
}

/// How many of the newest idle connections a checkout looks through for
/// one last given back on its own thread.
const HOME_SCAN: usize = 8;

/// Move the newest idle connection last given back on this thread, if one
/// of the newest few was, to the back, where checkout takes from. With
/// load threads that each poll their own sockets (PostgreSQL sessions), a
/// connection then mostly stays with one thread instead of moving its
/// socket; on one thread this is plain last in, first out.
fn take_home_first<T>(idle: &mut VecDeque<Box<Tracked<T>>>) {
    let me = this_thread();
    let n = idle.len();
    if n < 2 || idle[n - 1].home == me {
        return;
    }
    if let Some(i) = (n.saturating_sub(HOME_SCAN)..n - 1)
        .rev()
        .find(|&i| idle[i].home == me)
    {
        idle.swap(i, n - 1);
    }
}

/// A waiting checkout. Dropped while waiting, it takes back and returns
/// whatever was handed to it meanwhile.
struct Waiting<'a, C: Connector> {
    owner: &'a Exclusive<C>,
    rx: Option<oneshot::Receiver<Handoff<C::Conn>>>,
}

impl<C: Connector> Drop for Waiting<'_, C> {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            rx.close();
            if let Ok(handed) = rx.try_recv() {
                self.owner.checkin(handed, false, None);
            }
        }
    }
}

/// A permit held while connecting: given back if the connect fails or is
/// cancelled.
struct Permit<'a, C: Connector> {
    owner: &'a Exclusive<C>,
    armed: bool,
}

impl<C: Connector> Drop for Permit<'_, C> {
    fn drop(&mut self) {
        if self.armed {
            self.owner.checkin(None, false, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(homes: &[u64]) -> VecDeque<Box<Tracked<usize>>> {
        homes
            .iter()
            .enumerate()
            .map(|(i, &home)| {
                let mut t = Tracked::boxed(i, &PoolConfig::default(), None);
                t.home = home;
                t
            })
            .collect()
    }

    #[test]
    fn a_checkout_takes_the_newest_connection_given_back_on_its_thread() {
        let me = this_thread();
        let other = me + 1_000_000;
        let mut list = idle(&[me, other, me, other, other]);
        take_home_first(&mut list);
        assert_eq!(list.back().map(|t| t.conn), Some(2));
        // None of this thread among the newest few: last in, first out.
        let mut homes = vec![me];
        homes.extend([other; HOME_SCAN]);
        let mut list = idle(&homes);
        take_home_first(&mut list);
        assert_eq!(list.back().map(|t| t.conn), Some(HOME_SCAN));
    }
}
