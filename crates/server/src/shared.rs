//! What every request of a listener shares: the prepared body, the delay
//! sampler, the in-flight limit, the stall schedule, the counters; and the
//! processing common to HTTP and gRPC answers (the cpu spin, the fail coin,
//! the in-flight gauge).
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rand::Rng;
use tokio::sync::Semaphore;

use crate::authors::Authors;
use crate::config::ServerConfig;
use crate::counters::Counters;
use crate::delay::Sampler;

/// Everything the request path needs, prepared once per `serve` call.
pub(crate) struct Shared {
    pub(crate) stats: Arc<Counters>,
    pub(crate) body: Bytes,
    pub(crate) sampler: Sampler,
    pub(crate) cpu: Duration,
    pub(crate) semaphore: Option<Semaphore>,
    pub(crate) fail_rate: f64,
    pub(crate) max_requests: Option<u64>,
    /// `None` when keep-alive idle closing is off (`keepalive_timeout` zero).
    pub(crate) idle_timeout: Option<Duration>,
    /// Periodic freezes: (start of the first period, stall, period).
    pub(crate) stall: Option<(Instant, Duration, Duration)>,
    /// Service mode: `/authors/{id}` from PostgreSQL.
    pub(crate) authors: Option<Arc<Authors>>,
}

impl Shared {
    pub(crate) fn new(
        config: &ServerConfig,
        stats: Arc<Counters>,
        authors: Option<Arc<Authors>>,
    ) -> Shared {
        let body: Vec<u8> = b"Hello, World!"
            .iter()
            .copied()
            .cycle()
            .take(config.body_size)
            .collect();
        Shared {
            stats,
            body: Bytes::from(body),
            sampler: Sampler::new(&config.delay),
            cpu: config.cpu,
            semaphore: config.max_inflight.map(Semaphore::new),
            fail_rate: config.fail_rate,
            max_requests: config.max_requests_per_conn,
            idle_timeout: Some(config.keepalive_timeout).filter(|d| !d.is_zero()),
            stall: (!config.stall.is_zero() && !config.stall_every.is_zero())
                .then(|| (Instant::now(), config.stall, config.stall_every)),
            authors,
        }
    }

    /// When the stall under way ends, if one is.
    pub(crate) fn stalled_until(&self, now: Instant) -> Option<Instant> {
        let (start, stall, every) = self.stall?;
        let since = now.duration_since(start).as_nanos();
        let into_period = since % every.as_nanos();
        (into_period < stall.as_nanos())
            .then(|| now + stall - Duration::from_nanos(into_period as u64))
    }
}

/// Global in-flight gauge, held while a request is being processed.
pub(crate) struct Processing<'a>(&'a Counters);

impl<'a> Processing<'a> {
    pub(crate) fn new(stats: &'a Counters) -> Self {
        stats.request_started();
        Processing(stats)
    }
}

impl Drop for Processing<'_> {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// The cpu spin, then the fail coin: true when this request is to fail
/// (counted in `responses_failed`). Shared by HTTP and gRPC answers.
pub(crate) fn spin_and_toss(shared: &Shared) -> bool {
    if !shared.cpu.is_zero() {
        let start = Instant::now();
        while start.elapsed() < shared.cpu {
            std::hint::spin_loop();
        }
    }
    let failed = shared.fail_rate > 0.0 && rand::rng().random_bool(shared.fail_rate);
    if failed {
        shared.stats.response_failed();
    }
    failed
}
