//! The generator's own hiccups, as jHiccup meters them: a thread sleeps
//! 1 ms in a loop and records how much later than asked it woke. Whatever
//! stops it (the machine's other work, page faults, a paused process) also
//! stops the load threads, so its histogram bounds what the generator adds
//! to every latency it reports.
use crate::precise_sleep::tighten_timer_slack;
use hdrhistogram::Histogram;
use poolbench_model::new_histogram;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the meter sleeps each time.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// A running meter; `finish` stops it and returns its histogram.
pub(crate) struct HiccupMeter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Histogram<u64>>>,
}

impl HiccupMeter {
    /// Meter from now; wake-ups before `from` or after `until` are not
    /// recorded (warm-up, drain).
    pub(crate) fn start(from: Instant, until: Instant) -> HiccupMeter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("poolbench-hiccups".into())
            .spawn(move || meter(&flag, from, until))
            .ok();
        HiccupMeter { stop, thread }
    }

    /// Stop, and the hiccups in nanoseconds (empty if the thread could not
    /// start).
    pub(crate) fn finish(mut self) -> Histogram<u64> {
        self.stop.store(true, Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(new_histogram)
    }
}

fn meter(stop: &AtomicBool, from: Instant, until: Instant) -> Histogram<u64> {
    tighten_timer_slack();
    let mut h = new_histogram();
    while !stop.load(Relaxed) {
        let asleep = Instant::now();
        std::thread::sleep(TICK);
        let woke = Instant::now();
        if woke >= until {
            // Past the measured window: wait for the stop without metering.
            while !stop.load(Relaxed) {
                std::thread::sleep(TICK);
            }
            break;
        }
        if asleep >= from {
            // As jHiccup does: a hiccup of n ticks also stands for the
            // n - 1 wake-ups it swallowed (n ms, n - 1 ms, ...), so a long
            // stop weighs by its length, not as one sample.
            let late = (woke - asleep).saturating_sub(TICK);
            let _ = h.record_correct(late.as_nanos() as u64, TICK.as_nanos() as u64);
        }
    }
    h
}
