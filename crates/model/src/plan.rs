//! What one run does: the target, the grid (strategies × concurrency ×
//! pool sizes), the load model, the phases. Serialized into every result
//! as its config; checked by `Plan::validate` (validate.rs).
use crate::label::cell_label;
use crate::load::LoadModel;
use crate::ramp::Ramp;
use crate::shard::Shard;
use crate::slo::Slo;
use crate::target::TargetSpec;
use crate::target_options::TargetOptions;
use crate::StrategySpec;
use poolbench_pool_types::PoolConfig;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Everything one run does. Serialized into the result as its config.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    /// Where the load goes.
    pub target: TargetSpec,
    /// The target protocol's settings.
    #[serde(default)]
    pub target_options: TargetOptions,
    /// Strategies as given; sized ones without a size take each of `pool_sizes`.
    pub strategies: Vec<StrategySpec>,
    /// Closed-loop worker counts.
    pub concurrency: Vec<usize>,
    /// Sizes for strategies given without one.
    pub pool_sizes: Vec<usize>,
    /// Measured time per cell (an upper bound when `requests` is set).
    #[serde(with = "crate::duration::text")]
    #[schemars(with = "String")]
    pub duration: Duration,
    /// Time per cell before measuring; connections opened in it are kept.
    #[serde(with = "crate::duration::text")]
    #[schemars(with = "String")]
    pub warmup: Duration,
    /// Measured requests per cell; `None`: run for `duration`.
    pub requests: Option<u64>,
    /// Per-request timeout (after checkout).
    #[serde(with = "crate::duration::text")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// One request before the first cell, so that a target that cannot be
    /// reached stops the run before any load (exit 2). `tune` turns it off
    /// after its first point: a request given up on inside a frozen
    /// service stays queued there and keeps it frozen.
    #[serde(
        default = "preflight_default",
        skip_serializing_if = "preflight_is_default"
    )]
    pub preflight: bool,
    /// Connect timeout.
    #[serde(with = "crate::duration::text")]
    #[schemars(with = "String")]
    pub connect_timeout: Duration,
    /// Pool settings (checkout timeout, lifetimes).
    pub pool: PoolConfig,
    /// Load-generator runtime threads.
    pub threads: usize,
    /// How requests are issued.
    pub load: LoadModel,
    /// Runs of each cell, each with fresh connections.
    pub reps: usize,
    /// Each request holds a second connection from the same strategy
    /// while it runs (the nested checkout of a handler).
    pub nested: bool,
    /// Requests sent ahead on one HTTP/1.1 connection to probe for a
    /// batching server; `None`: no probe.
    pub pipeline: Option<usize>,
    /// Bounds a cell must meet to be recommended (`--slo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// With `slo`: a strategy stops climbing the concurrency levels after
    /// two cells in a row broke it, the cells above listed in the result's
    /// `skipped` (`--stop-on-slo`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_on_slo: bool,
    /// Keep each cell's latency per second of the measured window (for
    /// HdrHistogram interval logs, `--hdr-log`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hdr_intervals: bool,
    /// Load that changes within each cell (`--ramp`), for the ramp's
    /// length. Closed loop: the concurrency; the cell runs `ramp.peak()`
    /// workers, each active while the ramp is above it. Open loop: the
    /// rate, at most `concurrency` in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<Ramp>,
    /// This process runs one share of the plan (`--shard I/N`); the plan
    /// itself stays whole (cells, rate and sizes are the sum of all
    /// shards').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The first run starts its warm-up at this instant (RFC 3339, UTC),
    /// every later run one slot after the one before (`--start-at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// With `start_at`: the time each run (cell and repetition) gets;
    /// `None`: warm-up + duration + 3 s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::duration::opt_text"
    )]
    #[schemars(with = "Option<String>")]
    pub slot: Option<Duration>,
    /// Closed loop: each worker pauses this long between requests
    /// (`--think-time`), its connection back in the pool meanwhile.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::duration::opt_text"
    )]
    #[schemars(with = "Option<String>")]
    pub think_time: Option<Duration>,
}

/// One cell of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellSpec {
    /// With its size filled in.
    pub strategy: StrategySpec,
    /// Closed-loop workers.
    pub concurrency: usize,
}

impl CellSpec {
    /// A short label for progress and tables.
    pub fn label(&self) -> String {
        cell_label(&self.strategy.to_string(), self.concurrency)
    }
}

impl Plan {
    /// A plan with the defaults for everything but the target.
    pub fn new(target: TargetSpec) -> Plan {
        Plan {
            target,
            strategies: vec![StrategySpec::Pool(None)],
            concurrency: vec![1, 10, 50, 100],
            pool_sizes: vec![4, 16],
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            requests: None,
            timeout: Duration::from_secs(10),
            preflight: true,
            connect_timeout: Duration::from_secs(5),
            target_options: TargetOptions::default(),
            pool: PoolConfig::default(),
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            load: LoadModel::Closed,
            reps: 1,
            nested: false,
            pipeline: None,
            slo: None,
            stop_on_slo: false,
            hdr_intervals: false,
            ramp: None,
            shard: None,
            start_at: None,
            slot: None,
            think_time: None,
        }
    }

    /// The most connections one cell may hold open at once, and that cell:
    /// the strategy's cap where it has one (at most one per worker for
    /// exclusive leases, two with `nested`), else one per worker.
    pub fn most_connections(&self) -> Option<(usize, CellSpec)> {
        let per_worker = if self.nested { 2 } else { 1 };
        self.cells()
            .into_iter()
            .map(|cell| {
                let c = cell.concurrency.saturating_mul(per_worker);
                let n = match cell.strategy.connection_cap() {
                    Some(cap) if cell.strategy.shares_connections() => cap,
                    Some(cap) => cap.min(c),
                    None => c,
                };
                (n, cell)
            })
            .max_by_key(|(n, _)| *n)
    }

    /// The plan as results show it: no password from the URL, no
    /// credential header values.
    pub fn redacted(&self) -> Plan {
        let mut p = self.clone();
        p.target = self.target.redacted_spec();
        p.target_options.http = self.target_options.http.redacted();
        p
    }

    /// The grid, concurrency-major: every strategy (each pool size) at the
    /// first concurrency, then the next.
    pub fn cells(&self) -> Vec<CellSpec> {
        let mut strategies = Vec::new();
        for s in &self.strategies {
            if s.needs_size() {
                strategies.extend(self.pool_sizes.iter().map(|&n| s.with_size(n)));
            } else {
                strategies.push(*s);
            }
        }
        let mut seen = std::collections::HashSet::new();
        strategies.retain(|s| seen.insert(*s));
        self.concurrency
            .iter()
            .flat_map(|&c| {
                strategies.iter().map(move |&strategy| CellSpec {
                    strategy,
                    concurrency: c,
                })
            })
            .collect()
    }
}

fn preflight_default() -> bool {
    true
}

fn preflight_is_default(on: &bool) -> bool {
    *on
}
