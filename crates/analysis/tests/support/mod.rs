//! Hand-built results: a real run's result (`fixtures/base.json`, one cell
//! of `poolbench run -s pool:4 -c 4 -d 1s --warmup 0s --server-delay 2ms`)
//! as the base, and a builder that clones its cell and sets the figures a
//! test needs, the rest kept consistent (Little's law, counts, server
//! counters) so that a fresh cell trips no finding at all.
use poolbench_analysis::find_all;
use poolbench_model::findings::Id;
use poolbench_model::{
    Arrival, CellResult, DbPoolCounters, Errors, Finding, LoadModel, PoolCounters, RunResult,
    Sample, ServerCounters, Slo, Stall, StrategySpec, Summary, Timeline,
};

/// The stored result of a real run, as saved.
pub fn base() -> RunResult {
    serde_json::from_str(include_str!("../fixtures/base.json")).expect("base.json is a RunResult")
}

/// A closed-loop run of `cells`, with the base's plan and nothing analyzed.
pub fn run(cells: Vec<CellResult>) -> RunResult {
    let mut r = base();
    r.cells = cells;
    r.findings.clear();
    r.recommendation = None;
    r.reason = None;
    r.scaling.clear();
    r
}

/// An open-loop run of `cells` at `rate` req/s.
pub fn open_run(rate: f64, cells: Vec<CellResult>) -> RunResult {
    let mut r = run(cells);
    r.config.load = LoadModel::Open {
        rate,
        arrival: Arrival::Constant,
    };
    r
}

/// A closed-loop run with an SLO (`p99<50ms,errors<1%`, as `--slo` has it).
pub fn run_with_slo(slo: &str, cells: Vec<CellResult>) -> RunResult {
    let mut r = run(cells);
    r.config.slo = Some(slo.parse::<Slo>().expect("a valid --slo"));
    r
}

/// The finding named `name`; a name no finding has fails the test.
pub fn known(name: &str) -> Id {
    name.parse().expect("a finding's id")
}

/// The finding `id` in `result`'s findings, found afresh.
pub fn finding(result: &RunResult, id: &str) -> Option<Finding> {
    let id = known(id);
    find_all(result).into_iter().find(|p| p.id == id)
}

/// The evidence lines of finding `id` (empty when it does not apply).
pub fn evidence(result: &RunResult, id: &str) -> Vec<String> {
    finding(result, id).map(|p| p.evidence).unwrap_or_default()
}

/// The ids of every finding `result` shows.
pub fn ids(result: &RunResult) -> Vec<String> {
    find_all(result)
        .into_iter()
        .map(|p| p.id.to_string())
        .collect()
}

/// A summary whose mean is `mean` and p99 `p99` (µs), the other
/// percentiles spread plausibly around them.
pub fn summary(count: u64, mean: f64, p99: f64) -> Summary {
    Summary {
        count,
        p50: mean * 0.95,
        p90: mean + (p99 - mean) * 0.5,
        p99,
        p999: p99 * 1.2,
        max: p99 * 1.5,
        mean,
        stdev: mean * 0.1,
    }
}

/// A cell of `strategy` at `concurrency` workers; see the setters for what
/// can be changed. Its histograms stay the base's: only merges read them.
pub fn cell(strategy: &str, concurrency: usize) -> CellBuilder {
    let spec: StrategySpec = strategy.parse().expect("a strategy");
    let mut c = base().cells.remove(0);
    c.strategy = strategy.to_string();
    c.concurrency = concurrency;
    c.pool_size = spec.size();
    c.connection_cap = spec.connection_cap();
    c.pool = PoolCounters::default();
    c.errors = Errors::default();
    c.stalls.clear();
    let quiet = CellBuilder {
        cell: c,
        throughput: 1000.0,
        latency_ms: None,
        p99_ms: None,
        wait_ms: 0.0,
        service_ms: Some(None),
        achieved_concurrency: None,
        samples: 3,
        peak_open: None,
        server_peak: None,
        db_pool: None,
        timeline: None,
    };
    quiet.cpu(0.1, 0.2).hiccup_p999_ms(0.2)
}

/// Sets a cell's figures; [`CellBuilder::build`] derives the rest.
pub struct CellBuilder {
    cell: CellResult,
    throughput: f64,
    latency_ms: Option<f64>,
    p99_ms: Option<f64>,
    wait_ms: f64,
    /// `Some(None)`: half the request time; `None`: no server counters.
    service_ms: Option<Option<f64>>,
    achieved_concurrency: Option<f64>,
    samples: usize,
    peak_open: Option<u64>,
    server_peak: Option<u64>,
    db_pool: Option<DbPoolCounters>,
    timeline: Option<Timeline>,
}

impl CellBuilder {
    /// Successful requests per second (default 1000); the measured window
    /// is the base's 1 s.
    pub fn throughput(mut self, rps: f64) -> Self {
        self.throughput = rps;
        self
    }

    /// Mean latency; default: concurrency ÷ throughput (Little's law).
    pub fn latency_ms(mut self, mean: f64) -> Self {
        self.latency_ms = Some(mean);
        self
    }

    /// p99 latency; default: 1.35 × the mean.
    pub fn p99_ms(mut self, p99: f64) -> Self {
        self.p99_ms = Some(p99);
        self
    }

    /// Mean checkout wait, part of the latency (default 0).
    pub fn wait_ms(mut self, mean: f64) -> Self {
        self.wait_ms = mean;
        self
    }

    /// The server's mean service time from its counters; default: half
    /// the request time (the rest is the round trip), which keeps the cell
    /// well below the closed-loop ceiling.
    pub fn service_ms(mut self, ms: f64) -> Self {
        self.service_ms = Some(Some(ms));
        self
    }

    /// No server counters (a target other than poolbench's).
    pub fn no_server(mut self) -> Self {
        self.service_ms = None;
        self
    }

    /// The server's peak connections (default: the client's peak).
    pub fn server_peak(mut self, n: u64) -> Self {
        self.server_peak = Some(n);
        self
    }

    /// The service's database pool counters (`serve --db`).
    pub fn db_pool(mut self, db: DbPoolCounters) -> Self {
        self.db_pool = Some(db);
        self
    }

    /// Throughput × mean latency; default: exactly that.
    pub fn achieved_concurrency(mut self, n: f64) -> Self {
        self.achieved_concurrency = Some(n);
        self
    }

    /// Repetitions (default 3, with a non-zero confidence interval).
    pub fn samples(mut self, n: usize) -> Self {
        self.samples = n;
        self
    }

    /// Most connections open at once (default: the cap, at most one per
    /// worker).
    pub fn peak_open(mut self, n: u64) -> Self {
        self.peak_open = Some(n);
        self
    }

    /// `n` failed requests of `kind` (`refused`, `timeout`, `status`, …),
    /// on top of the successes.
    pub fn errors(mut self, kind: &str, n: u64) -> Self {
        self.cell.errors.total += n;
        *self
            .cell
            .errors
            .by_kind
            .entry(kind.to_string())
            .or_default() += n;
        self
    }

    /// A stretch with requests in flight and no success.
    pub fn stall(mut self, start_s: f64, duration_s: f64) -> Self {
        self.cell.stalls.push(Stall {
            start_s,
            duration_s,
        });
        self
    }

    /// The timeline (100 ms buckets): successes and failures per bucket,
    /// measured from bucket `from`; default: the successes spread evenly.
    pub fn timeline(mut self, from: usize, ok: &[u32], errors: &[u32]) -> Self {
        assert_eq!(ok.len(), errors.len());
        self.timeline = Some(Timeline {
            bucket_ms: 100,
            measure_from_bucket: from,
            ok: ok.to_vec(),
            errors: errors.to_vec(),
            inflight: vec![self.cell.concurrency as u32; ok.len()],
            open: Vec::new(),
            wait_us: Vec::new(),
        });
        self
    }

    /// poolbench's share of the cores and the machine's (default 10%, 20%).
    pub fn cpu(mut self, own: f64, machine: f64) -> Self {
        self.cell.generator_cpu = Some(own);
        self.cell.machine_cpu = Some(machine);
        self
    }

    /// The hiccup meter's p99.9 (default 0.2 ms).
    pub fn hiccup_p999_ms(mut self, ms: f64) -> Self {
        self.cell.generator_hiccups_us = summary(1000, ms * 100.0, ms * 500.0);
        self.cell.generator_hiccups_us.p999 = ms * 1000.0;
        self.cell.generator_hiccups_us.max = ms * 1000.0;
        self
    }

    /// Any other change to the cell, before the figures are derived.
    pub fn with(mut self, f: impl FnOnce(&mut CellResult)) -> Self {
        f(&mut self.cell);
        self
    }

    pub fn build(self) -> CellResult {
        let mut c = self.cell;
        let workers = c.concurrency as f64;
        c.duration_s = 1.0;
        c.throughput_rps = self.throughput;
        c.ok = self.throughput.round() as u64;
        c.requests = c.ok + c.errors.total;
        c.achieved_rate = c.requests as f64 / c.duration_s;
        c.after_end = 0;
        let latency_ms = self.latency_ms.unwrap_or(match self.throughput > 0.0 {
            true => workers / self.throughput * 1000.0,
            false => 0.0,
        });
        let p99_ms = self.p99_ms.unwrap_or(latency_ms * 1.35);
        c.latency_us = summary(c.ok, latency_ms * 1000.0, p99_ms * 1000.0);
        c.checkout_wait_us = summary(c.ok, self.wait_ms * 1000.0, self.wait_ms * 3000.0);
        let request_ms = latency_ms - self.wait_ms;
        c.request_us = summary(c.ok, request_ms * 1000.0, (p99_ms - self.wait_ms) * 1000.0);
        c.achieved_concurrency = self
            .achieved_concurrency
            .unwrap_or(self.throughput * latency_ms / 1000.0);
        // Repetitions a little apart, so the interval is not zero.
        c.samples = (0..self.samples)
            .map(|i| Sample {
                throughput_rps: self.throughput * (1.0 + 0.01 * (i as f64 - 1.0)),
                p99_us: p99_ms * 1000.0,
            })
            .collect();
        c.reps = self.samples.max(1);
        c.throughput_ci95 = (self.samples >= 2).then_some(self.throughput * 0.02);
        let cap = c.connection_cap.unwrap_or(c.concurrency).min(c.concurrency);
        c.connections.peak_open = self.peak_open.unwrap_or(cap as u64);
        c.connections.opened = c.connections.peak_open;
        c.connections.closed = c.connections.peak_open;
        c.connections.idle_at_end = c.connections.peak_open;
        c.connections.requests_per_connection = match c.connections.opened {
            0 => 0.0,
            n => c.ok as f64 / n as f64,
        };
        c.server = self.service_ms.map(|service| {
            let service_ms = service.unwrap_or(request_ms / 2.0);
            ServerCounters {
                connections_accepted: c.connections.opened,
                connections_open: 0,
                connections_peak: self.server_peak.unwrap_or(c.connections.peak_open),
                requests: c.requests,
                inflight_peak: c.concurrency as u64,
                service_ns_total: (c.requests as f64 * service_ms * 1e6) as u64,
                db_pool: self.db_pool,
            }
        });
        c.timeline = self.timeline.unwrap_or_else(|| {
            let per = |n: u64| vec![(n / 10) as u32; 10];
            Timeline {
                bucket_ms: 100,
                measure_from_bucket: 0,
                ok: per(c.ok),
                errors: per(c.errors.total),
                inflight: vec![c.concurrency as u32; 10],
                open: Vec::new(),
                wait_us: Vec::new(),
            }
        });
        c
    }
}

/// A cell of `strategy` at `c` workers with `rps` req/s, all else quiet.
pub fn quiet(strategy: &str, c: usize, rps: f64) -> CellResult {
    cell(strategy, c).throughput(rps).build()
}

/// A PostgreSQL connection limit as a survey reads it: `connections`
/// left to this client of `connections + 8`, 3 reserved, 5 held by others.
pub fn limit(connections: u64) -> poolbench_model::ServerLimit {
    poolbench_model::ServerLimit {
        server: "postgresql".into(),
        connections: Some(connections),
        max_connections: Some(connections + 8),
        reserved: 3,
        held_by_others: Some(5),
        source: format!(
            "max_connections {} − 3 reserved − 5 held by others = {connections}, from pg_settings",
            connections + 8
        ),
        ..poolbench_model::ServerLimit::default()
    }
}
