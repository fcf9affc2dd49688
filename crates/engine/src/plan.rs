use crate::load::LoadModel;
use poolbench_pool::{PoolConfig, StrategySpec};
use poolbench_targets::{TargetOptions, TargetSpec};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use thiserror::Error;

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
    #[serde(with = "humantime_serde_compat")]
    #[schemars(with = "String")]
    pub duration: Duration,
    /// Time per cell before measuring; connections opened in it are kept.
    #[serde(with = "humantime_serde_compat")]
    #[schemars(with = "String")]
    pub warmup: Duration,
    /// Measured requests per cell; `None`: run for `duration`.
    pub requests: Option<u64>,
    /// Per-request timeout (after checkout).
    #[serde(with = "humantime_serde_compat")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Connect timeout.
    #[serde(with = "humantime_serde_compat")]
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
    pub slo: Option<crate::slo::Slo>,
    /// Keep each cell's latency per second of the measured window (for
    /// HdrHistogram interval logs, `--hdr-log`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hdr_intervals: bool,
    /// Load that changes within each cell (`--ramp`), for the ramp's
    /// length. Closed loop: the concurrency; the cell runs `ramp.peak()`
    /// workers, each active while the ramp is above it. Open loop: the
    /// rate, at most `concurrency` in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::ramp::Ramp>,
    /// This process runs one share of the plan (`--shard I/N`); the plan
    /// itself stays whole (cells, rate and sizes are the sum of all
    /// shards').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
    /// The first run starts its warm-up at this instant (RFC 3339, UTC),
    /// every later run one slot after the one before (`--start-at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// With `start_at`: the time each run (cell and repetition) gets;
    /// `None`: warm-up + duration + 3 s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "humantime_serde_opt"
    )]
    #[schemars(with = "Option<String>")]
    pub slot: Option<Duration>,
}

/// A plan that cannot run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("--method, --header, --body, --body-file, --content-type and --host apply to http://, h2c:// and https:// targets, not {0}://")]
    HttpOptions(String),
    #[error("--method, --body, --body-file and --content-type do not apply to {0}:// targets (gRPC takes --data; -H and --host apply)")]
    GrpcHttpOptions(String),
    #[error("--h2-client applies to h2c:// targets, not {0}://")]
    H2Client(String),
    #[error("--param applies to postgres:// targets, not {0}://")]
    PgParams(String),
    #[error("--proto, --import-path, --call, --data and --data-file apply to grpc:// and grpcs:// targets, not {0}://")]
    GrpcOptions(String),
    #[error("concurrency must be at least 1")]
    ZeroConcurrency,
    #[error("pool size must be at least 1")]
    ZeroPoolSize,
    #[error("no strategies given")]
    NoStrategies,
    #[error("no concurrency levels given")]
    NoConcurrency,
    #[error("strategy \"{0}\" needs a size and --pool is empty")]
    NoPoolSizes(String),
    #[error("duration must be greater than zero")]
    ZeroDuration,
    #[error("--requests must be at least 1")]
    ZeroRequests,
    #[error("threads must be at least 1")]
    ZeroThreads,
    #[error("--rate must be greater than zero")]
    ZeroRate,
    #[error("--reps must be at least 1")]
    ZeroReps,
    #[error("--batch and --samples must be at least 1")]
    ZeroBatch,
    #[error("--samples {samples} needs {needed} requests (--batch {size}), more than --requests {budget}")]
    SamplesOverBudget {
        samples: u64,
        size: u64,
        needed: u64,
        budget: u64,
    },
    #[error("--pipeline must be at least 2")]
    Pipeline,
    #[error("{0}")]
    Split(#[from] crate::shard::SplitError),
    #[error("{0}")]
    StartAt(String),
    #[error("--slot {slot:?} is shorter than the warm-up plus the duration ({needed:?})")]
    ShortSlot { slot: Duration, needed: Duration },
    #[error("--slot applies with --start-at")]
    SlotWithoutStart,
    #[error("--ramp changes the concurrency of a closed loop or the rate of an open one; batches have neither")]
    RampNeedsClosedLoop,
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
        format!("{} c={}", self.strategy, self.concurrency)
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
            connect_timeout: Duration::from_secs(5),
            target_options: TargetOptions::default(),
            pool: PoolConfig::default(),
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            load: LoadModel::Closed,
            reps: 1,
            nested: false,
            pipeline: None,
            slo: None,
            hdr_intervals: false,
            ramp: None,
            shard: None,
            start_at: None,
            slot: None,
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
                let n = match crate::assemble::connection_cap(&cell.strategy) {
                    Some(cap) if cell.strategy.shares_connections() => cap,
                    Some(cap) => cap.min(c),
                    None => c,
                };
                (n, cell)
            })
            .max_by_key(|(n, _)| *n)
    }

    /// Check the plan; every error is one line.
    /// The plan as results show it: no password from the URL, no
    /// credential header values.
    pub fn redacted(&self) -> Plan {
        let mut p = self.clone();
        p.target = self.target.redacted_spec();
        p.target_options.http = self.target_options.http.redacted();
        p
    }

    pub fn validate(&self) -> Result<(), PlanError> {
        if self.strategies.is_empty() {
            return Err(PlanError::NoStrategies);
        }
        if self.concurrency.is_empty() {
            return Err(PlanError::NoConcurrency);
        }
        if self.concurrency.contains(&0) {
            return Err(PlanError::ZeroConcurrency);
        }
        if self.pool_sizes.contains(&0) {
            return Err(PlanError::ZeroPoolSize);
        }
        if let Some(s) = self.strategies.iter().find(|s| s.needs_size()) {
            if self.pool_sizes.is_empty() {
                return Err(PlanError::NoPoolSizes(s.kind().to_string()));
            }
        }
        if self.duration.is_zero() {
            return Err(PlanError::ZeroDuration);
        }
        if self.requests == Some(0) {
            return Err(PlanError::ZeroRequests);
        }
        if self.threads == 0 {
            return Err(PlanError::ZeroThreads);
        }
        if self.reps == 0 {
            return Err(PlanError::ZeroReps);
        }
        if self.pipeline.is_some_and(|d| d < 2) {
            return Err(PlanError::Pipeline);
        }
        if self.ramp.is_some() && matches!(self.load, crate::load::LoadModel::Batch { .. }) {
            return Err(PlanError::RampNeedsClosedLoop);
        }
        if let Some(at) = &self.start_at {
            let start = crate::shard::parse_start(at).map_err(PlanError::StartAt)?;
            if start <= std::time::SystemTime::now() {
                return Err(PlanError::StartAt(format!(
                    "--start-at {at} has passed: give every shard a start time a little ahead"
                )));
            }
        }
        match (self.slot, &self.start_at) {
            (Some(_), None) => return Err(PlanError::SlotWithoutStart),
            (Some(slot), Some(_)) if slot < self.warmup + self.duration => {
                return Err(PlanError::ShortSlot {
                    slot,
                    needed: self.warmup + self.duration,
                })
            }
            _ => {}
        }
        // Every shard of the plan must have work, whichever this one is.
        if let Some(shard) = self.shard {
            for index in 0..shard.count {
                crate::shard::Shard { index, ..shard }.split(self)?;
            }
        }
        let scheme = self.target.scheme.clone();
        let http = matches!(scheme.as_str(), "http" | "h2c" | "https");
        let grpc = matches!(scheme.as_str(), "grpc" | "grpcs");
        let h = &self.target_options.http;
        if grpc {
            let metadata_only = poolbench_targets::HttpRequestOptions {
                headers: h.headers.clone(),
                host: h.host.clone(),
                ..Default::default()
            };
            if *h != metadata_only {
                return Err(PlanError::GrpcHttpOptions(scheme));
            }
        } else if !http && *h != Default::default() {
            return Err(PlanError::HttpOptions(scheme));
        }
        if self.target_options.h2_crate && scheme != "h2c" {
            return Err(PlanError::H2Client(scheme));
        }
        let postgres = matches!(scheme.as_str(), "postgres" | "postgresql");
        if !postgres && !self.target_options.params.is_empty() {
            return Err(PlanError::PgParams(scheme));
        }
        if !grpc && self.target_options.grpc.is_set() {
            return Err(PlanError::GrpcOptions(scheme));
        }
        match self.load {
            LoadModel::Open { rate, .. } if !(rate > 0.0 && rate.is_finite()) => {
                return Err(PlanError::ZeroRate)
            }
            LoadModel::Batch { size, samples } => {
                if size == 0 || samples == 0 {
                    return Err(PlanError::ZeroBatch);
                }
                if let Some(budget) = self.requests {
                    let needed = size.saturating_mul(samples);
                    if needed > budget {
                        return Err(PlanError::SamplesOverBudget {
                            samples,
                            size,
                            needed,
                            budget,
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
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

/// Durations as human strings ("10s", "250ms") in the result JSON.
mod humantime_serde_compat {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(&s).map_err(serde::de::Error::custom)
    }
}

/// `Option<Duration>` as a human string, or absent.
mod humantime_serde_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::humantime_serde_compat::serialize(d, s),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(s) => humantime::parse_duration(&s)
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}
