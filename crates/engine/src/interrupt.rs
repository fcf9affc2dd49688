//! A request to stop (the first SIGINT or SIGTERM, caught by the binary):
//! the running cell ends at once with what it measured, the remaining
//! cells are skipped, and the result is still made. Process-wide, as
//! signals are.
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The signal that asked to stop (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Ask the run to stop, because of `signal` (kept if one came first).
pub fn request(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire);
}

/// The signal that asked to stop, if one did.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::Acquire) {
        0 => None,
        s => Some(s),
    }
}

/// Resolves once a stop is requested (checked every 10 ms).
pub(crate) async fn wait() {
    while requested().is_none() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
