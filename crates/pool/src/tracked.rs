use poolbench_pool_types::PoolConfig;
use rand::Rng;
use std::time::{Duration, Instant};

/// A connection with the times the pool keeps for it.
pub(crate) struct Tracked<T> {
    pub(crate) conn: T,
    pub(crate) expires: Option<Instant>,
    pub(crate) idle_since: Instant,
    /// Index in the strategy's holder table, if it has one.
    pub(crate) holder: Option<usize>,
    /// How long opening it took, until the first lease reports it.
    pub(crate) fresh: Option<Duration>,
    /// The thread that last gave it back ([`this_thread`]).
    pub(crate) home: u64,
    /// When it was last given back, by the real clock (the coarse one
    /// may be a second off: too coarse to tell how long a server keeps an
    /// idle connection).
    pub(crate) returned: Instant,
}

/// The current thread as a small non-zero number, cheap to read: a
/// connection whose socket is registered with this thread's I/O driver is
/// best handed to a task on the same thread.
pub(crate) fn this_thread() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Relaxed);
    }
    ID.with(|id| *id)
}

impl<T> Tracked<T> {
    pub(crate) fn new(conn: T, config: &PoolConfig, holder: Option<usize>) -> Self {
        let now = Instant::now();
        let expires = config.max_lifetime.map(|life| {
            let j = config.lifetime_jitter.clamp(0.0, 1.0);
            let factor = if j > 0.0 {
                rand::rng().random_range(1.0 - j..=1.0 + j)
            } else {
                1.0
            };
            now + Duration::from_secs_f64(life.as_secs_f64() * factor)
        });
        Tracked {
            conn,
            expires,
            idle_since: now,
            holder,
            fresh: None,
            home: this_thread(),
            returned: now,
        }
    }

    /// On the heap: an exclusive pool moves its connections between the
    /// idle list, the waiters and the leases on every checkout, a pointer's
    /// move where the connection may be hundreds of bytes.
    pub(crate) fn boxed(conn: T, config: &PoolConfig, holder: Option<usize>) -> Box<Self> {
        Box::new(Tracked::new(conn, config, holder))
    }

    pub(crate) fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|e| now >= e)
    }
}
