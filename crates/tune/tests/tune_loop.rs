//! `tune`'s whole loop (`Searcher`) on simulated services with a simulated
//! clock: one that freezes for 30 s and recovers, one that never recovers,
//! one whose queued requests keep it frozen until they drain, a 500 ms
//! service with no limit, one that collapses only after a delay; and the
//! pool search through noise and drift: a service serving 2 at once, a
//! server allowing 10 streams a connection, a plateau from 6 to 400, a
//! plateau reached gradually (nginx on shared cores). Each
//! search runs in milliseconds; its minutes are the simulated clock's.
use crate::support::cell;
use poolbench_model::{
    encode_histogram, new_histogram, CellResult, Fleet, ServerIdle, ServerLimit, StrategySpec,
    Timeline, TuneLoad, TunePhase, TuneResult,
};
use poolbench_tune::{conclude, Ask, Clock, Measure, Probes, Ran, Searcher, Setup};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// The simulated clock, shared by the search and the service.
#[derive(Clone, Default)]
pub(crate) struct SimClock(pub(crate) Rc<Cell<Duration>>);

impl Clock for SimClock {
    fn now(&self) -> Duration {
        self.0.get()
    }
    fn sleep(&self, d: Duration) {
        self.0.set(self.0.get() + d)
    }
}

/// A service: `servers` at once, each request `service_ms`; above
/// `freeze_above` requests at once it answers nothing for `freeze_for`
/// plus `drain_each` for every request queued inside it; from
/// `collapse_at` requests at once it stops answering `collapse_after`
/// into a run.
#[derive(Clone)]
pub(crate) struct Service {
    pub(crate) servers: usize,
    pub(crate) service_ms: f64,
    pub(crate) freeze_above: Option<usize>,
    pub(crate) freeze_for: Duration,
    pub(crate) drain_each: Duration,
    pub(crate) collapse_at: Option<(usize, Duration)>,
    /// Streams a server allows per multiplexed connection.
    pub(crate) streams: Option<usize>,
    /// Past this many at once, each more one costs this share of the
    /// throughput (1 ÷ (1 + share × excess)): a retrograde service.
    pub(crate) retrograde: Option<(usize, f64)>,
    /// Each run's throughput off by up to this share, at random.
    pub(crate) noise: f64,
    /// And by up to this share, slowly (a 20 s period): the machine's drift.
    pub(crate) drift: f64,
    /// A plateau reached gradually: `servers` × (1 − e^(−n/τ)) busy with
    /// n at once (nginx on shared cores), instead of min(n, servers).
    pub(crate) soft: Option<f64>,
    /// The load generator on 2 cores: one load thread carries at most
    /// this many req/s; one thread per core carries the service's
    /// throughput times this factor (below 1: the threads take the
    /// service's cores). `None`: the generator is never in the way.
    pub(crate) generator: Option<(f64, f64)>,
    /// From this many in flight, one load thread carries this share of
    /// what one per core carries, at a fifth of a core per thread at
    /// least (it falls behind without being busy). Needs `generator`.
    pub(crate) lag: Option<(usize, f64)>,
    /// The machine this much faster for the reference's runs (as many
    /// connections as requests in flight) that start in this window
    /// (start, length): a change of its speed that happened to fall on
    /// both reference halves of a comparison (A B, B A), which pairing
    /// cannot cancel.
    pub(crate) burst: Option<(Duration, Duration, f64)>,
    /// What it answers the probes before any load.
    pub(crate) probed: Probed,
    /// The user's Ctrl-C at this time: a run it falls in fails, as the
    /// engine's cut-short run does (the binary's `Measure`).
    pub(crate) interrupt_at: Option<Duration>,
}

/// What a simulated service answers the search's probes (probes.rs).
#[derive(Clone, Default)]
pub(crate) struct Probed {
    /// The server's own connection limit.
    pub(crate) limit: Option<u64>,
    /// Why it does not answer pipelined requests (`None`: it does).
    pub(crate) no_pipelining: Option<&'static str>,
    /// Its idle close: whether its settings say it, and after how long.
    pub(crate) idle: Option<(bool, Duration)>,
}

impl Service {
    pub(crate) fn new(servers: usize, service_ms: f64) -> Service {
        Service {
            servers,
            service_ms,
            freeze_above: None,
            freeze_for: Duration::ZERO,
            drain_each: Duration::ZERO,
            collapse_at: None,
            streams: None,
            retrograde: None,
            noise: 0.0,
            drift: 0.0,
            soft: None,
            generator: None,
            lag: None,
            burst: None,
            probed: Probed::default(),
            interrupt_at: None,
        }
    }
}

struct Sim {
    service: Service,
    clock: SimClock,
    frozen_until: Duration,
    /// The noise's generator (xorshift), seeded per search.
    seed: u64,
}

impl Sim {
    /// This run's factor on throughput: noise and drift.
    fn factor(&mut self) -> f64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let u = (self.seed % 2001) as f64 / 1000.0 - 1.0;
        let t = self.clock.now().as_secs_f64();
        let wave = (t * std::f64::consts::TAU / 20.0).sin();
        1.0 + self.service.noise * u + self.service.drift * wave
    }
}

const WARMUP: Duration = Duration::from_millis(300);

impl Measure for Sim {
    type Error = String;

    fn run(&mut self, ask: &Ask) -> Result<Ran, String> {
        let streams = self.service.streams.unwrap_or(usize::MAX);
        let (at_server, connections) = match ask.strategy {
            StrategySpec::Pool(Some(n)) => (n.min(ask.in_flight), n),
            StrategySpec::RoundRobin(Some(n)) => (n.saturating_mul(streams).min(ask.in_flight), n),
            StrategySpec::Shared => (streams.min(ask.in_flight), 1),
            // HTTP/1.1 answers a connection's pipelined requests one at a
            // time: the server works on one request per connection.
            StrategySpec::Pipeline(Some(n), Some(d)) => {
                assert!(
                    n * d >= ask.in_flight,
                    "{} leaves requests out",
                    ask.strategy
                );
                (n.min(ask.in_flight), n)
            }
            _ => (ask.in_flight, 0),
        };
        let warmup = match ask.phase {
            TunePhase::Recovery => Duration::ZERO,
            _ => WARMUP,
        };
        let start = self.clock.now();
        if ask.requests.is_some() {
            return Ok(self.ping(ask));
        }
        let s = &self.service;
        if s.freeze_above.is_some_and(|f| at_server > f) && start >= self.frozen_until {
            self.frozen_until = start + s.freeze_for + s.drain_each * at_server as u32;
        }
        let frozen = start < self.frozen_until;
        let collapse = s
            .collapse_at
            .filter(|(at, _)| at_server >= *at)
            .map(|(_, after)| after.saturating_sub(warmup));
        let factor = self.factor();
        let s = &self.service;
        let reference = connections == ask.in_flight && ask.phase != TunePhase::Capacity;
        let factor = match s.burst {
            Some((from, len, f)) if reference && start >= from && start < from + len => factor * f,
            _ => factor,
        };
        // The generator: one thread's ceiling, or the threads' toll.
        let (factor, cap) = match (s.generator, ask.threads) {
            (Some((one_cap, _)), Some(1)) => (factor, one_cap),
            (Some((_, many_factor)), _) => (factor * many_factor, f64::INFINITY),
            (None, _) => (factor, f64::INFINITY),
        };
        let factor = match s.lag {
            Some((from, share)) if ask.threads == Some(1) && at_server >= from => factor * share,
            _ => factor,
        };
        let mut c = simulated_cell(ask, at_server, s, frozen, collapse, (factor, cap));
        if let Some((one_cap, _)) = s.generator {
            c.generator_cpu = Some(c.throughput_rps / one_cap / 2.0);
        }
        if s.lag.is_some() {
            c.generator_cpu = Some(c.generator_cpu.unwrap_or(0.0).max(0.2));
        }
        if let Some(limit) = s.streams {
            c.pool.streams_allowed = vec![limit as u64; connections];
        }
        self.clock
            .sleep(warmup + ask.window + Duration::from_millis(100));
        if self.interrupted() {
            return Err("interrupted".into());
        }
        Ok(Ran {
            cell: c,
            findings: Vec::new(),
        })
    }

    fn interrupted(&self) -> bool {
        self.service
            .interrupt_at
            .is_some_and(|at| self.clock.now() >= at)
    }

    fn server_limit(&mut self) -> Result<Option<ServerLimit>, String> {
        Ok(self.service.probed.limit.map(|n| ServerLimit {
            server: "postgresql".into(),
            connections: Some(n),
            max_connections: Some(n),
            ..ServerLimit::default()
        }))
    }

    fn pipelining(&mut self, _depth: usize, _timeout: Duration) -> Result<(), String> {
        match self.service.probed.no_pipelining {
            Some(why) => Err(why.into()),
            None => Ok(()),
        }
    }

    /// Read: at once. Measured: idle gaps that double from 1 s until one
    /// outlasts the close, each waited out on the clock, none beyond
    /// `up_to` or `left`.
    fn server_idle(
        &mut self,
        up_to: Option<Duration>,
        left: Duration,
    ) -> Result<Option<ServerIdle>, String> {
        let Some((says, close)) = self.service.probed.idle else {
            return Ok(None);
        };
        let Some(max) = up_to else {
            return Ok(Some(ServerIdle {
                idle_close_s: says.then_some(close.as_secs_f64()),
                source: match says {
                    true => "idle_session_timeout".into(),
                    false => ServerIdle::NOT_SAID.into(),
                },
                ..ServerIdle::default()
            }));
        };
        let (mut gap, mut spent, mut closed) = (Duration::from_secs(1), Duration::ZERO, false);
        while gap <= max && spent + gap <= left {
            spent += gap;
            if gap >= close {
                closed = true;
                break;
            }
            gap *= 2;
        }
        self.clock.sleep(spent);
        Ok(Some(ServerIdle {
            idle_close_s: closed.then_some(close.as_secs_f64()),
            source: "measured".into(),
            note: (!closed).then(|| "open at every gap tried".into()),
            ..ServerIdle::default()
        }))
    }
}

impl Sim {
    /// One request, waited for up to the ask's window: answered once the
    /// service is no longer frozen.
    fn ping(&mut self, ask: &Ask) -> Ran {
        let start = self.clock.now();
        let service = Duration::from_secs_f64(self.service.service_ms / 1000.0);
        let answered = self.frozen_until.max(start) + service;
        let mut c = match answered <= start + ask.window {
            true => {
                let took = answered - start;
                let mut c = simulated_cell(
                    &Ask {
                        window: took.max(Duration::from_millis(100)),
                        ..ask.clone()
                    },
                    1,
                    &self.service,
                    false,
                    None,
                    (1.0, f64::INFINITY),
                );
                c.ok = 1;
                c.requests = 1;
                let mut h = new_histogram();
                h.record(took.as_nanos() as u64).unwrap();
                c.histograms.latency_ns = encode_histogram(&h);
                self.clock.sleep(took);
                c
            }
            false => {
                let mut c = simulated_cell(ask, 1, &self.service, true, None, (1.0, f64::INFINITY));
                c.errors.total = 1;
                c.errors.by_kind.insert("timeout".into(), 1);
                c.requests = 1;
                self.clock.sleep(ask.window);
                c
            }
        };
        c.duration_s = c.duration_s.max(0.1);
        Ran {
            cell: c,
            findings: Vec::new(),
        }
    }
}

/// One run's cell: throughput by the service's law, latency by Little's,
/// the 100 ms timeline zero where it answered nothing.
fn simulated_cell(
    ask: &Ask,
    at_server: usize,
    s: &Service,
    frozen: bool,
    collapse_after: Option<Duration>,
    (factor, cap): (f64, f64),
) -> CellResult {
    let window_s = ask.window.as_secs_f64();
    let busy = match s.soft {
        Some(tau) => s.servers as f64 * (1.0 - (-(at_server as f64) / tau).exp()),
        None => at_server.min(s.servers) as f64,
    };
    let fall = s.retrograde.map_or(1.0, |(from, share)| {
        1.0 / (1.0 + share * at_server.saturating_sub(from) as f64)
    });
    let x = if frozen {
        0.0
    } else {
        (factor * fall * busy / (s.service_ms / 1000.0)).min(cap)
    };
    let latency_ms = if x > 0.0 {
        ask.in_flight as f64 / x * 1000.0
    } else {
        0.0
    };
    let buckets = (window_s * 10.0).round() as usize;
    let answering = collapse_after.map_or(buckets, |d| (d.as_secs_f64() * 10.0) as usize);
    let per_bucket = x / 10.0;
    let ok_buckets: Vec<u32> = (0..buckets)
        .map(|i| match i < answering {
            true => {
                ((i + 1) as f64 * per_bucket).floor() as u32
                    - (i as f64 * per_bucket).floor() as u32
            }
            false => 0,
        })
        .collect();
    let ok: u64 = ok_buckets.iter().map(|&n| n as u64).sum();
    let strategy = ask.strategy.to_string();
    let mut c = cell(&strategy, ask.in_flight)
        .throughput(x)
        .latency_ms(latency_ms.max(0.001))
        .build();
    c.duration_s = window_s;
    c.ok = ok;
    c.requests = ok;
    c.achieved_concurrency = ok as f64 / window_s * latency_ms / 1000.0;
    let mut h = new_histogram();
    if ok > 0 {
        let us = latency_ms * 1e6;
        for f in [0.9, 1.0, 1.1] {
            h.record_n((us * f) as u64, ok.div_ceil(3)).unwrap();
        }
    }
    c.histograms.latency_ns = encode_histogram(&h);
    c.timeline = Timeline {
        bucket_ms: 100,
        measure_from_bucket: 0,
        ok: ok_buckets,
        errors: vec![0; buckets],
        inflight: vec![ask.in_flight as u32; buckets],
        open: Vec::new(),
        wait_us: Vec::new(),
    };
    c
}

/// The whole search against `service` at `-c c`, concluded.
pub(crate) fn tune(
    service: Service,
    c: usize,
    families: &[&str],
    recovery: Duration,
) -> TuneResult {
    tune_seeded(service, c, families, recovery, 0x9e37_79b9_7f4a_7c15)
}

/// The same, the noise seeded with `seed`.
pub(crate) fn tune_seeded(
    service: Service,
    c: usize,
    families: &[&str],
    recovery: Duration,
    seed: u64,
) -> TuneResult {
    tune_within(
        service,
        (c, families),
        recovery,
        seed,
        Duration::from_secs(120),
    )
}

/// The whole search, with families skipped before it (family, why).
pub(crate) fn tune_skipping(
    service: Service,
    c: usize,
    families: &[&str],
    skipped: &[(&str, &str)],
) -> TuneResult {
    SKIPPED.with(|s| {
        *s.borrow_mut() = skipped
            .iter()
            .map(|(f, why)| (f.to_string(), why.to_string()))
            .collect()
    });
    tune(service, c, families, Duration::from_secs(60))
}

thread_local! {
    /// Families the next search skips (`tune_skipping`).
    static SKIPPED: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The same, within `budget`.
pub(crate) fn tune_within(
    service: Service,
    (c, families): (usize, &[&str]),
    recovery: Duration,
    seed: u64,
    budget: Duration,
) -> TuneResult {
    let asked = (Probes::default(), None);
    tune_probing(service, (c, families), (recovery, seed, budget), asked)
}

/// The same, with `probes` asked for before any load and, for the
/// server-limit probe, the fleet (`--replicas`) the result carries.
pub(crate) fn tune_probing(
    service: Service,
    (c, families): (usize, &[&str]),
    (recovery, seed, budget): (Duration, u64, Duration),
    (probes, fleet): (Probes, Option<Fleet>),
) -> TuneResult {
    let clock = SimClock::default();
    let setup = Setup {
        load: TuneLoad::Concurrency(c),
        slo: None,
        budget,
        recovery,
        families: families.iter().map(|f| f.to_string()).collect(),
        most_in_flight: 4 * c,
        warmup: WARMUP,
        skipped: SKIPPED.with(|s| std::mem::take(&mut *s.borrow_mut())),
        compare_threads: service.generator.map(|_| 2),
        probes,
    };
    let sim = Sim {
        service,
        clock: clock.clone(),
        frozen_until: Duration::ZERO,
        seed,
    };
    let mut skeleton = TuneResult::begin(
        "http://127.0.0.1:8000/".into(),
        setup.load,
        None,
        setup.budget.as_secs_f64(),
        setup.families.clone(),
    );
    skeleton.fleet = fleet;
    let mut r = Searcher::new(setup, skeleton, sim, clock)
        .run()
        .expect("a simulated service never errs");
    conclude(&mut r, "http");
    r
}

/// FastAPI with synchronous SQLAlchemy at its pool defaults, as measured:
/// 15 connections, the 16th request's checkout holds the event loop 30 s.
pub(crate) fn fastapi() -> Service {
    Service {
        freeze_above: Some(15),
        freeze_for: Duration::from_secs(30),
        ..Service::new(2, 2.5)
    }
}

/// After every failing point, the next point that is not a recovery one
/// comes only after a recovery point that answered.
/// The points, a line each, for a failing assertion's message.
pub(crate) fn trail(r: &TuneResult) -> String {
    r.points
        .iter()
        .map(|p| {
            format!(
                "{:?} {} c={} {:.0}/s req={} stall={:.1}",
                p.phase, p.strategy, p.in_flight, p.throughput_rps, p.requests, p.stalled_s
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
