//! `serve --check-client`: what the server sees of its clients, kept per
//! connection and sampled every few milliseconds, read as a
//! [`ClientWatch`]. Off unless [`Counters::watching`] made the counters.
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use poolbench_model::{ClientWatch, EndedBy};

/// How often the gauges are sampled.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// Share of the keep-alive timeout past which reusing an idle connection
/// races the server's close.
const LATE_SHARE: f64 = 0.9;

/// How a connection ended, as the connection task knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Client,
    ServerIdle,
    ServerLimit,
    ServerStop,
    Reset,
}

/// One connection, watched.
pub(crate) struct ConnRec {
    born: Instant,
    h2: AtomicBool,
    /// Requests of this connection in flight, and its streams peak.
    open: AtomicU64,
    /// Nanoseconds after `born` its last request finished.
    last_done: AtomicU64,
    requests: AtomicU64,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watch")
    }
}

/// The counters of a watch.
pub struct Watch {
    keepalive: Option<Duration>,
    streams_allowed: Option<u64>,
    first: Mutex<Option<Instant>>,
    /// Connections accepted; those open that carried a request (the
    /// server's own endpoints left out: a client's stats request is not
    /// its pool), and their peak; requests.
    accepted: AtomicU64,
    used_open: AtomicU64,
    used_peak: AtomicU64,
    requests: AtomicU64,
    in_flight: AtomicU64,
    in_flight_peak: AtomicU64,
    /// HTTP/2 connections with every stream the server allows open.
    at_limit: AtomicU64,
    h2_open: AtomicU64,
    h2_open_peak: AtomicU64,
    streams_peak: AtomicU64,
    late_reuses: AtomicU64,
    idle_gap_max_ns: AtomicU64,
    idle_closed: AtomicBool,
    after_idle_close: AtomicU64,
    ended: Mutex<Ended>,
    samples: Mutex<Samples>,
}

#[derive(Default)]
struct Ended {
    by: EndedBy,
    life_sum_s: f64,
    life_max_s: f64,
    count: u64,
    http1: u64,
    h2: u64,
}

#[derive(Default)]
struct Samples {
    all: u64,
    busy: u64,
    connections_sum: u64,
    in_flight_sum: u64,
    at_limit: u64,
    in_flight_counts: HashMap<u64, u64>,
}

impl Watch {
    pub(crate) fn new(keepalive: Option<Duration>, streams_allowed: Option<u64>) -> Watch {
        Watch {
            keepalive,
            streams_allowed,
            first: Mutex::new(None),
            accepted: AtomicU64::new(0),
            used_open: AtomicU64::new(0),
            used_peak: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            in_flight_peak: AtomicU64::new(0),
            at_limit: AtomicU64::new(0),
            h2_open: AtomicU64::new(0),
            h2_open_peak: AtomicU64::new(0),
            streams_peak: AtomicU64::new(0),
            late_reuses: AtomicU64::new(0),
            idle_gap_max_ns: AtomicU64::new(0),
            idle_closed: AtomicBool::new(false),
            after_idle_close: AtomicU64::new(0),
            ended: Mutex::new(Ended::default()),
            samples: Mutex::new(Samples::default()),
        }
    }

    /// Whether a client has connected yet.
    pub fn seen(&self) -> bool {
        self.first.lock().expect("not poisoned").is_some()
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Relaxed)
    }

    pub(crate) fn opened(&self) -> Arc<ConnRec> {
        let now = Instant::now();
        self.first.lock().expect("not poisoned").get_or_insert(now);
        self.accepted.fetch_add(1, Relaxed);
        Arc::new(ConnRec {
            born: now,
            h2: AtomicBool::new(false),
            open: AtomicU64::new(0),
            last_done: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        })
    }

    pub(crate) fn request_started(&self, c: &ConnRec, h2: bool) {
        let n = self.in_flight.fetch_add(1, Relaxed) + 1;
        self.in_flight_peak.fetch_max(n, Relaxed);
        if self.idle_closed.load(Relaxed) {
            self.after_idle_close.fetch_add(1, Relaxed);
        }
        self.requests.fetch_add(1, Relaxed);
        let earlier = c.requests.fetch_add(1, Relaxed);
        if earlier == 0 {
            let open = self.used_open.fetch_add(1, Relaxed) + 1;
            self.used_peak.fetch_max(open, Relaxed);
        }
        if h2 && !c.h2.swap(true, Relaxed) {
            let open = self.h2_open.fetch_add(1, Relaxed) + 1;
            self.h2_open_peak.fetch_max(open, Relaxed);
        }
        let open = c.open.fetch_add(1, Relaxed) + 1;
        if h2 {
            self.streams_peak.fetch_max(open, Relaxed);
            if Some(open) == self.streams_allowed {
                self.at_limit.fetch_add(1, Relaxed);
            }
        }
        if open == 1 && earlier > 0 {
            let since = c.born.elapsed().as_nanos() as u64;
            let gap = since.saturating_sub(c.last_done.load(Relaxed));
            self.idle_gap_max_ns.fetch_max(gap, Relaxed);
            let late = self
                .keepalive
                .is_some_and(|k| gap as f64 >= LATE_SHARE * k.as_nanos() as f64);
            if late {
                self.late_reuses.fetch_add(1, Relaxed);
            }
        }
    }

    pub(crate) fn request_done(&self, c: &ConnRec, h2: bool) {
        self.in_flight.fetch_sub(1, Relaxed);
        let was = c.open.fetch_sub(1, Relaxed);
        if h2 && Some(was) == self.streams_allowed {
            self.at_limit.fetch_sub(1, Relaxed);
        }
        c.last_done
            .fetch_max(c.born.elapsed().as_nanos() as u64, Relaxed);
    }

    pub(crate) fn closed(&self, c: &ConnRec, how: Ending) {
        if c.requests.load(Relaxed) > 0 {
            self.used_open.fetch_sub(1, Relaxed);
        }
        if c.h2.load(Relaxed) {
            self.h2_open.fetch_sub(1, Relaxed);
        }
        if how == Ending::ServerIdle {
            self.idle_closed.store(true, Relaxed);
        }
        let life = c.born.elapsed().as_secs_f64();
        let mut e = self.ended.lock().expect("not poisoned");
        e.count += 1;
        e.life_sum_s += life;
        e.life_max_s = e.life_max_s.max(life);
        match c.h2.load(Relaxed) {
            true => e.h2 += 1,
            false if c.requests.load(Relaxed) > 0 => e.http1 += 1,
            false => {}
        }
        let by = &mut e.by;
        *match how {
            Ending::Client => &mut by.client,
            Ending::ServerIdle => &mut by.server_idle,
            Ending::ServerLimit => &mut by.server_limit,
            Ending::ServerStop => &mut by.server_stop,
            Ending::Reset => &mut by.reset,
        } += 1;
    }

    /// Reads the gauges once (every [`SAMPLE_EVERY`], from the start of
    /// the first connection on).
    pub fn sample(&self) {
        if !self.seen() {
            return;
        }
        let n = self.in_flight.load(Relaxed);
        let mut s = self.samples.lock().expect("not poisoned");
        s.all += 1;
        s.connections_sum += self.used_open.load(Relaxed);
        if n > 0 {
            s.busy += 1;
            s.in_flight_sum += n;
            *s.in_flight_counts.entry(n).or_default() += 1;
            if self.at_limit.load(Relaxed) > 0 {
                s.at_limit += 1;
            }
        }
    }

    /// What was seen so far (TLS handshakes and gRPC calls left at zero:
    /// the server's [`Counters`](crate::Counters) count those).
    pub fn snapshot(&self) -> ClientWatch {
        let s = self.samples.lock().expect("not poisoned");
        let e = self.ended.lock().expect("not poisoned");
        let first = *self.first.lock().expect("not poisoned");
        let per = |sum: u64, of: u64| if of > 0 { sum as f64 / of as f64 } else { 0.0 };
        let (mode, mode_n) = s
            .in_flight_counts
            .iter()
            .max_by_key(|(n, count)| (**count, **n))
            .map_or((0, 0), |(n, c)| (*n, *c));
        let peak = self.in_flight_peak.load(Relaxed);
        let at_peak = s.in_flight_counts.get(&peak).copied().unwrap_or(0);
        let dt = SAMPLE_EVERY.as_secs_f64();
        ClientWatch {
            watched_s: first.map_or(0.0, |f| f.elapsed().as_secs_f64()),
            busy_s: s.busy as f64 * dt,
            requests: self.requests.load(Relaxed),
            connections_opened: self.accepted.load(Relaxed),
            connections_peak: self.used_peak.load(Relaxed),
            connections_mean: per(s.connections_sum, s.all),
            in_flight_peak: peak,
            in_flight_peak_share: per(at_peak, s.busy),
            in_flight_mean: per(s.in_flight_sum, s.busy),
            in_flight_mode: mode,
            in_flight_mode_share: per(mode_n, s.busy),
            connection_life_mean_s: if e.count > 0 {
                e.life_sum_s / e.count as f64
            } else {
                0.0
            },
            connection_life_max_s: e.life_max_s,
            ended_by: e.by.clone(),
            http1_connections: e.http1,
            h2_connections: e.h2 + self.h2_open.load(Relaxed),
            h2_connections_peak: self.h2_open_peak.load(Relaxed),
            streams_peak: self.streams_peak.load(Relaxed),
            streams_allowed: self.streams_allowed,
            streams_at_limit_share: per(s.at_limit, s.busy),
            grpc_requests: 0,
            tls_handshakes: 0,
            tls_resumed: 0,
            keepalive_timeout_s: self.keepalive.map(|k| k.as_secs_f64()),
            idle_gap_max_s: self.idle_gap_max_ns.load(Relaxed) as f64 / 1e9,
            late_reuses: self.late_reuses.load(Relaxed),
            requests_after_idle_close: self.after_idle_close.load(Relaxed),
        }
    }
}
