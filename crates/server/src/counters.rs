//! Server-side counters, shared through an `Arc` and read as snapshots.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::watch::Watch;
use poolbench_model::{DbPoolCounters, ServerCounters};

/// Live counters of the built-in server. Cheap to update from any thread.
///
/// Requests to `/_poolbench/*` are not counted in `requests`/`inflight`.
#[derive(Debug, Default)]
pub struct Counters {
    connections_accepted: AtomicU64,
    connections_open: AtomicU64,
    connections_peak: AtomicU64,
    requests: AtomicU64,
    inflight: AtomicU64,
    inflight_peak: AtomicU64,
    responses_failed: AtomicU64,
    service_ns: AtomicU64,
    tls_handshakes: AtomicU64,
    tls_resumed: AtomicU64,
    h2_streams_peak: AtomicU64,
    grpc_requests: AtomicU64,
    /// `serve --check-client`: the clients watched.
    watch: Option<Watch>,
}

/// A point-in-time copy of [`Counters`] (each field read atomically on its own).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CounterValues {
    /// Connections accepted since start or the last reset.
    pub connections_accepted: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// Most connections open at once since start or the last reset.
    pub connections_peak: u64,
    /// Requests received since start or the last reset.
    pub requests: u64,
    /// Requests being processed now (holding an in-flight permit, if limited).
    pub inflight: u64,
    /// Most requests processed at once since start or the last reset.
    pub inflight_peak: u64,
    /// Requests answered with a 500 (fail_rate) since start or the last reset.
    pub responses_failed: u64,
    /// Total nanoseconds requests spent inside the server (waiting for
    /// `max_inflight`, delay, cpu, stall) since start or the last reset;
    /// requests with none of those count as zero.
    #[serde(default)]
    pub service_ns_total: u64,
    /// TLS handshakes completed on the TLS listener since start or the last reset.
    #[serde(default)]
    pub tls_handshakes: u64,
    /// Of `tls_handshakes`, those that resumed an earlier session (a
    /// TLS 1.3 ticket or a TLS 1.2 session ID or ticket).
    #[serde(default)]
    pub tls_resumed: u64,
    /// Most HTTP/2 streams (requests in flight, gRPC included) open at once
    /// on one connection since start or the last reset.
    #[serde(default)]
    pub h2_streams_peak: u64,
    /// gRPC `SayHello` calls received since start or the last reset.
    #[serde(default)]
    pub grpc_requests: u64,
    /// Service mode: the database pool's counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_pool: Option<DbPoolCounters>,
}

impl Counters {
    /// Fresh counters, all zero.
    pub fn new() -> Counters {
        Counters::default()
    }

    /// Fresh counters that also watch the clients (`serve
    /// --check-client`): the server's keep-alive idle timeout and the
    /// HTTP/2 streams it allows per connection, as configured.
    pub fn watching(keepalive: Option<std::time::Duration>, streams_allowed: u64) -> Counters {
        Counters {
            watch: Some(Watch::new(keepalive, Some(streams_allowed))),
            ..Counters::default()
        }
    }

    /// The client watch, when on.
    pub fn watch(&self) -> Option<&Watch> {
        self.watch.as_ref()
    }

    /// Reads every counter.
    pub fn snapshot(&self) -> CounterValues {
        CounterValues {
            connections_accepted: self.connections_accepted.load(Relaxed),
            connections_open: self.connections_open.load(Relaxed),
            connections_peak: self.connections_peak.load(Relaxed),
            requests: self.requests.load(Relaxed),
            inflight: self.inflight.load(Relaxed),
            inflight_peak: self.inflight_peak.load(Relaxed),
            responses_failed: self.responses_failed.load(Relaxed),
            service_ns_total: self.service_ns.load(Relaxed),
            tls_handshakes: self.tls_handshakes.load(Relaxed),
            tls_resumed: self.tls_resumed.load(Relaxed),
            h2_streams_peak: self.h2_streams_peak.load(Relaxed),
            grpc_requests: self.grpc_requests.load(Relaxed),
            db_pool: None,
        }
    }

    /// Zeroes the totals; the peaks restart from the current gauges
    /// (`h2_streams_peak` from zero).
    pub fn reset(&self) {
        self.connections_accepted.store(0, Relaxed);
        self.requests.store(0, Relaxed);
        self.responses_failed.store(0, Relaxed);
        self.service_ns.store(0, Relaxed);
        self.tls_handshakes.store(0, Relaxed);
        self.tls_resumed.store(0, Relaxed);
        self.h2_streams_peak.store(0, Relaxed);
        self.grpc_requests.store(0, Relaxed);
        self.connections_peak
            .store(self.connections_open.load(Relaxed), Relaxed);
        self.inflight_peak
            .store(self.inflight.load(Relaxed), Relaxed);
    }

    pub(crate) fn connection_opened(&self) {
        self.connections_accepted.fetch_add(1, Relaxed);
        let open = self.connections_open.fetch_add(1, Relaxed) + 1;
        raise(&self.connections_peak, open);
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Relaxed);
    }

    pub(crate) fn request_received(&self) {
        self.requests.fetch_add(1, Relaxed);
    }

    pub(crate) fn request_started(&self) {
        let now = self.inflight.fetch_add(1, Relaxed) + 1;
        raise(&self.inflight_peak, now);
    }

    pub(crate) fn request_finished(&self) {
        self.inflight.fetch_sub(1, Relaxed);
    }

    pub(crate) fn served(&self, took: std::time::Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.service_ns.fetch_add(ns, Relaxed);
    }

    /// A completed handshake; `resumed` when it resumed a session.
    pub(crate) fn tls_handshake(&self, resumed: bool) {
        self.tls_handshakes.fetch_add(1, Relaxed);
        if resumed {
            self.tls_resumed.fetch_add(1, Relaxed);
        }
    }

    /// A connection now has `open` HTTP/2 streams.
    pub(crate) fn h2_streams_open(&self, open: u64) {
        raise(&self.h2_streams_peak, open);
    }

    pub(crate) fn grpc_request(&self) {
        self.grpc_requests.fetch_add(1, Relaxed);
    }

    pub(crate) fn response_failed(&self) {
        self.responses_failed.fetch_add(1, Relaxed);
    }
}

/// `fetch_max`, skipping the write (and the cache-line bounce) when not higher.
fn raise(peak: &AtomicU64, value: u64) {
    if peak.load(Relaxed) < value {
        peak.fetch_max(value, Relaxed);
    }
}

/// Counts a connection as accepted and open; decrements `connections_open`
/// when dropped, whatever path ends (or never starts) the connection task.
pub(crate) struct ConnectionGuard(Arc<Counters>);

impl ConnectionGuard {
    pub(crate) fn new(stats: Arc<Counters>) -> Self {
        stats.connection_opened();
        ConnectionGuard(stats)
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.connection_closed();
    }
}

/// What a result keeps of the server's counters.
impl From<CounterValues> for ServerCounters {
    fn from(s: CounterValues) -> ServerCounters {
        ServerCounters {
            connections_accepted: s.connections_accepted,
            connections_open: s.connections_open,
            connections_peak: s.connections_peak,
            requests: s.requests,
            inflight_peak: s.inflight_peak,
            service_ns_total: s.service_ns_total,
            db_pool: s.db_pool,
        }
    }
}
