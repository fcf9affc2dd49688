//! Sleeping to the microsecond on a thread of our own: the kernel's timer
//! slack set to its minimum, a coarse sleep, then a short spin. Tokio's
//! timer wheel ticks in milliseconds, too coarse to pace an open loop or to
//! meter the generator's hiccups.
use std::time::{Duration, Instant};

/// The last stretch before a deadline is spun rather than slept. Measured
/// on 2 cores at 10,000 and 20,000 req/s (bench/RESULTS.md): no spin gave a
/// send lag p99 of 43-48 µs; 10 µs gave 25-33 µs for no more CPU; 30 and
/// 100 µs cost up to a third of a core more and, starving the load threads,
/// were sometimes worse.
pub(crate) const SPIN: Duration = Duration::from_micros(10);

/// Make this thread's sleeps wake on time: the kernel otherwise may delay
/// a wake-up by 50 µs (the default timer slack) to batch it with others.
pub(crate) fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_timerslack(1);
    }
}

/// Sleep until `at`: a coarse sleep to `SPIN` before it, then spin.
pub(crate) fn sleep_until(at: Instant) {
    loop {
        let now = Instant::now();
        if now >= at {
            return;
        }
        let left = at - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}
