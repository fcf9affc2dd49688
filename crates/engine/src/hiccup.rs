//! The generator's own hiccups, as jHiccup meters them: a thread sleeps
//! 1 ms in a loop and records how much later than asked it woke. Whatever
//! stops it (the machine's other work, page faults, a paused process) also
//! stops the load threads, so its histogram bounds what the generator adds
//! to every latency it reports.
use crate::precise_wake::tighten_timer_slack;
use hdrhistogram::Histogram;
use poolbench_model::new_histogram;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the meter sleeps each time.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// A running meter; `finish` stops it and returns its histogram.
pub(crate) struct HiccupMeter {
    stop: Arc<AtomicBool>,
    /// What it recorded so far (locked once a tick, by the meter alone
    /// unless a live view reads it).
    histogram: Arc<Mutex<Histogram<u64>>>,
    thread: Option<JoinHandle<()>>,
}

impl HiccupMeter {
    /// Meter from now; wake-ups before `from` or after `until` are not
    /// recorded (warm-up, drain).
    pub(crate) fn start(from: Instant, until: Instant) -> HiccupMeter {
        let stop = Arc::new(AtomicBool::new(false));
        let histogram = Arc::new(Mutex::new(new_histogram()));
        let (flag, h) = (stop.clone(), histogram.clone());
        let thread = std::thread::Builder::new()
            .name("poolbench-hiccups".into())
            .spawn(move || meter(&flag, &h, from, until))
            .ok();
        HiccupMeter {
            stop,
            histogram,
            thread,
        }
    }

    /// The histogram as it fills, for a live view.
    pub(crate) fn view(&self) -> Arc<Mutex<Histogram<u64>>> {
        self.histogram.clone()
    }

    /// Stop, and the hiccups in nanoseconds (empty if the thread could not
    /// start).
    pub(crate) fn finish(mut self) -> Histogram<u64> {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.histogram
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn meter(stop: &AtomicBool, h: &Mutex<Histogram<u64>>, from: Instant, until: Instant) {
    tighten_timer_slack();
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
            let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
            let _ = h.record_correct(late.as_nanos() as u64, TICK.as_nanos() as u64);
        }
    }
}
