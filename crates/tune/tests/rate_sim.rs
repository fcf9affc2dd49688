//! A simulated open-loop queue for the rate search (`--find-rate`): a
//! service completing at most `capacity` req/s, each request `service_ms`
//! alone; above it the queue grows by the excess and latency with it.
//! Above `freeze_above` requests in flight at the service (those past the
//! open loop's cap wait in poolbench) it answers nothing for `freeze_for`
//! and `freeze_each` more per request above it, and every request sent
//! meanwhile fails (a timeout), as FastAPI with synchronous SQLAlchemy
//! does at its pool's defaults.
use crate::support::cell;
pub(crate) use crate::tune_loop::SimClock;
use poolbench_model::{
    encode_histogram, new_histogram, CellResult, LatencyInterval, Summary, Timeline,
};
use poolbench_tune::{Ask, Clock, Measure, Ran};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

#[derive(Clone)]
pub(crate) struct Queue {
    pub(crate) capacity: f64,
    pub(crate) service_ms: f64,
    /// Each run's capacity off by up to this share, at random.
    pub(crate) noise: f64,
    pub(crate) freeze_above: Option<f64>,
    pub(crate) freeze_for: Duration,
    /// And this much longer for each request in flight above it.
    pub(crate) freeze_each: Duration,
    /// poolbench sends at most this many req/s, its cores busy above it.
    pub(crate) generator: Option<f64>,
    /// The user's Ctrl-C at this time: a run it falls in fails, as the
    /// engine's cut-short run does.
    pub(crate) interrupt_at: Option<Duration>,
}

impl Queue {
    pub(crate) fn new(capacity: f64, service_ms: f64) -> Queue {
        Queue {
            capacity,
            service_ms,
            noise: 0.0,
            freeze_above: None,
            freeze_for: Duration::ZERO,
            freeze_each: Duration::ZERO,
            generator: None,
            interrupt_at: None,
        }
    }
}

pub(crate) struct SimQueue {
    pub(crate) queue: Queue,
    pub(crate) clock: SimClock,
    pub(crate) frozen_until: Duration,
    /// Rate points begun while the service was frozen.
    pub(crate) held_while_frozen: Rc<Cell<usize>>,
    seed: u64,
}

impl SimQueue {
    pub(crate) fn new(queue: Queue, clock: SimClock, seed: u64) -> SimQueue {
        SimQueue {
            queue,
            clock,
            frozen_until: Duration::ZERO,
            held_while_frozen: Rc::default(),
            seed: seed.max(1),
        }
    }

    /// Uniform in [-1, 1] (xorshift).
    fn uniform(&mut self) -> f64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed % 2001) as f64 / 1000.0 - 1.0
    }

    fn frozen(&self) -> bool {
        self.clock.now() < self.frozen_until
    }
}

const WARMUP: Duration = Duration::from_millis(500);
const DT: f64 = 0.1;

impl Measure for SimQueue {
    type Error = String;

    fn run(&mut self, ask: &Ask) -> Result<Ran, String> {
        let cell = match (ask.rate, ask.requests) {
            (Some(rate), _) => self.open(ask, rate),
            (None, Some(_)) => self.ping(ask),
            (None, None) => self.alone(ask),
        };
        if self.interrupted() {
            return Err("interrupted".into());
        }
        Ok(Ran {
            cell,
            findings: Vec::new(),
        })
    }

    fn interrupted(&self) -> bool {
        self.queue
            .interrupt_at
            .is_some_and(|at| self.clock.now() >= at)
    }
}

impl SimQueue {
    /// One request at a time for the window.
    fn alone(&mut self, ask: &Ask) -> CellResult {
        let s = self.queue.service_ms / 1000.0;
        let window = ask.window.as_secs_f64();
        let ok = if self.frozen() {
            0
        } else {
            (window / s) as u64
        };
        self.clock.sleep(ask.window + Duration::from_millis(300));
        finish(cell_of(ask, window), ok, 0, &[(ok, s)], Vec::new())
    }

    /// One request, waited for up to the window.
    fn ping(&mut self, ask: &Ask) -> CellResult {
        let s = Duration::from_secs_f64(self.queue.service_ms / 1000.0);
        let start = self.clock.now();
        let answered = self.frozen_until.max(start) + s;
        let (ok, took) = match answered <= start + ask.window {
            true => (1, answered - start),
            false => (0, ask.window),
        };
        self.clock.sleep(took);
        let c = cell_of(ask, took.as_secs_f64());
        finish(c, ok, 0, &[(ok, s.as_secs_f64())], Vec::new())
    }

    /// The open loop at `rate` for the warm-up and the window.
    fn open(&mut self, ask: &Ask, rate: f64) -> CellResult {
        if self.frozen() {
            self.held_while_frozen.set(self.held_while_frozen.get() + 1);
        }
        let q = self.queue.clone();
        let capacity = q.capacity * (1.0 + q.noise * self.uniform());
        let sent = q.generator.map_or(rate, |g| rate.min(g));
        let s = q.service_ms / 1000.0;
        let from = (WARMUP.as_secs_f64() / DT).round() as usize;
        let n = from + (ask.window.as_secs_f64() / DT).round() as usize;
        let (mut queued, mut carry) = (0.0f64, 0.0f64);
        let (mut ok, mut errors, mut inflight) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        let mut latencies: Vec<(u64, f64)> = Vec::new();
        let mut seconds: Vec<Vec<(u64, f64)>> = Vec::new();
        for i in 0..n {
            let now = self.clock.now() + Duration::from_secs_f64(i as f64 * DT);
            let frozen = now < self.frozen_until;
            let in_flight = sent.min(capacity) * s + queued;
            // Past the open loop's cap the requests wait in poolbench.
            let at_service = in_flight.min(ask.in_flight as f64);
            if let Some(excess) = q.freeze_above.map(|f| at_service - f).filter(|&e| e > 0.0) {
                if !frozen {
                    self.frozen_until = now + q.freeze_for + q.freeze_each.mul_f64(excess.ceil());
                }
            }
            let frozen = now < self.frozen_until;
            let done = match frozen {
                true => {
                    errors[i] = (sent * DT).round() as u32;
                    0.0
                }
                false => {
                    queued = (queued + (sent - capacity) * DT).max(0.0);
                    sent.min(capacity) * DT * (1.0 + 0.02 * self.uniform())
                }
            };
            carry += done;
            ok[i] = carry.floor() as u32;
            carry -= ok[i] as f64;
            inflight[i] = in_flight.min(ask.in_flight as f64) as u32;
            let latency = s + queued / capacity;
            if i >= from && ok[i] > 0 {
                latencies.push((ok[i] as u64, latency));
                let second = (i - from) / 10;
                while seconds.len() <= second {
                    seconds.push(Vec::new());
                }
                seconds[second].push((ok[i] as u64, latency));
            }
        }
        self.clock
            .sleep(WARMUP + ask.window + Duration::from_millis(300));
        let measured_ok: u64 = ok[from..].iter().map(|&x| x as u64).sum();
        let measured_errors: u64 = errors[from..].iter().map(|&x| x as u64).sum();
        let mut c = cell_of(ask, ask.window.as_secs_f64());
        c.generator_cpu = Some(match sent < rate {
            true => 0.99,
            false => 0.3,
        });
        c.timeline = Timeline {
            bucket_ms: 100,
            measure_from_bucket: from,
            ok,
            errors,
            inflight,
            open: Vec::new(),
            wait_us: Vec::new(),
        };
        let intervals = seconds
            .iter()
            .enumerate()
            .map(|(i, parts)| LatencyInterval {
                second: i as u32,
                start_unix_s: i as f64,
                duration_s: 1.0,
                latency_ns: histogram(parts).0,
            })
            .collect();
        finish(c, measured_ok, measured_errors, &latencies, intervals)
    }
}

fn cell_of(ask: &Ask, window_s: f64) -> CellResult {
    let mut c = cell(&ask.strategy.to_string(), ask.in_flight).build();
    c.duration_s = window_s;
    c
}

/// Latencies (count, seconds), each spread ±10%, as an encoded
/// nanosecond histogram and its summary in µs.
fn histogram(parts: &[(u64, f64)]) -> (String, Summary) {
    let mut h = new_histogram();
    for &(n, s) in parts {
        for f in [0.9, 1.0, 1.1] {
            let _ = h.record_n((s * f * 1e9) as u64, n.div_ceil(3));
        }
    }
    (encode_histogram(&h), Summary::of(&h))
}

fn finish(
    mut c: CellResult,
    ok: u64,
    errors: u64,
    latencies: &[(u64, f64)],
    intervals: Vec<LatencyInterval>,
) -> CellResult {
    c.ok = ok;
    c.requests = ok + errors;
    c.errors.total = errors;
    c.errors.by_kind.clear();
    if errors > 0 {
        c.errors.by_kind.insert("timeout".into(), errors);
    }
    c.throughput_rps = ok as f64 / c.duration_s.max(1e-3);
    let (encoded, summary) = histogram(latencies);
    c.latency_us = match ok {
        0 => Summary::default(),
        _ => summary,
    };
    c.histograms.latency_ns = encoded;
    c.latency_intervals = intervals;
    if c.timeline.bucket_ms == 0 || c.timeline.ok.is_empty() {
        c.timeline = Timeline::default();
    }
    c
}
