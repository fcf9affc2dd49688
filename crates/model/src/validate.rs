//! Whether a plan can run: each check gives a one-line error naming what
//! was wrong.
use crate::load::LoadModel;
use crate::plan::Plan;
use crate::shard::{Shard, SplitError};
use crate::source::expand_sources;
use crate::start::parse_start;
use crate::target_options::HttpRequestOptions;
use std::time::Duration;
use thiserror::Error;

/// A plan that cannot run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("--method, --header, --body, --body-file, --content-type and --host apply to http://, h2c:// and https:// targets, not {0}://")]
    HttpOptions(String),
    #[error("--method, --body, --body-file and --content-type do not apply to {0}:// targets (gRPC takes --data; -H and --host apply)")]
    GrpcHttpOptions(String),
    #[error("--h2-client applies to h2c:// targets, not {0}://")]
    H2Client(String),
    #[error("--param applies to postgres:// and mysql:// targets, not {0}://")]
    PgParams(String),
    #[error("--query-mode applies to postgres:// targets, not {0}://")]
    QueryMode(String),
    #[error("strategy \"{strategy}\" is the MySQL client's own pool: it runs on mysql:// and mariadb:// targets, not {scheme}://")]
    ClientPool { strategy: String, scheme: String },
    #[error("strategy \"{0}\" pipelines HTTP/1.1: it runs on http:// targets, not {1}:// (HTTP/2 and gRPC multiplex on round-robin:N instead; Redis pipelines on shared)")]
    PipelineScheme(String, String),
    #[error("--proto, --import-path, --call, --data and --data-file apply to grpc:// and grpcs:// targets, not {0}://")]
    GrpcOptions(String),
    #[error("--source applies to http://, h2c://, https://, grpc://, grpcs://, postgres://, redis:// and rediss:// targets: the {0}:// client library opens its own sockets")]
    SourceTarget(String),
    #[error("{0}")]
    Source(String),
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
    Split(#[from] SplitError),
    #[error("{0}")]
    StartAt(String),
    #[error("--slot {slot:?} is shorter than the warm-up plus the duration ({needed:?})")]
    ShortSlot { slot: Duration, needed: Duration },
    #[error("--slot applies with --start-at")]
    SlotWithoutStart,
    #[error("--ramp changes the concurrency of a closed loop or the rate of an open one; batches have neither")]
    RampNeedsClosedLoop,
    #[error("--stop-on-slo needs --slo BOUNDS: the bounds whose breach stops a strategy's climb")]
    StopWithoutSlo,
    #[error("--stop-on-slo climbs the concurrency levels and this grid has one: give -c two or more (a rate, a ramp or pool sizes are run whole)")]
    StopWithoutClimb,
    #[error("--stop-on-slo with --shard: each shard would stop on its own share, and the shards' cells would no longer add up")]
    StopSharded,
}

impl Plan {
    /// Check the plan; every error is one line.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.check_grid()?;
        self.check_phases()?;
        self.check_schedule()?;
        self.check_protocol_options()?;
        self.check_load()?;
        self.check_stop_on_slo()
    }

    /// Strategies, concurrency levels and pool sizes.
    fn check_grid(&self) -> Result<(), PlanError> {
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
        Ok(())
    }

    /// Duration, request budget, threads, repetitions, probe, ramp.
    fn check_phases(&self) -> Result<(), PlanError> {
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
        if self.ramp.is_some() && matches!(self.load, LoadModel::Batch { .. }) {
            return Err(PlanError::RampNeedsClosedLoop);
        }
        Ok(())
    }

    /// `--start-at`, `--slot` and `--shard`: a start ahead, slots long
    /// enough, and work for every shard of the plan, whichever this one is.
    fn check_schedule(&self) -> Result<(), PlanError> {
        if let Some(at) = &self.start_at {
            let start = parse_start(at).map_err(PlanError::StartAt)?;
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
        if let Some(shard) = self.shard {
            for index in 0..shard.count {
                Shard { index, ..shard }.split(self)?;
            }
        }
        Ok(())
    }

    /// Request options only where the target's protocol takes them.
    fn check_protocol_options(&self) -> Result<(), PlanError> {
        use crate::Scheme;
        let scheme = self.target.scheme.clone();
        let protocol = self.target.protocol();
        let http = matches!(protocol, Scheme::Http | Scheme::H2c | Scheme::Https);
        let grpc = protocol.is_grpc();
        let h = &self.target_options.http;
        if grpc {
            let metadata_only = HttpRequestOptions {
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
        if self.target_options.h2_crate && protocol != Scheme::H2c {
            return Err(PlanError::H2Client(scheme));
        }
        let sql = protocol.is_sql();
        if !sql && !self.target_options.params.is_empty() {
            return Err(PlanError::PgParams(scheme));
        }
        let postgres = protocol == Scheme::Postgres;
        if !postgres && self.target_options.query_mode.is_some() {
            return Err(PlanError::QueryMode(scheme));
        }
        if !grpc && self.target_options.grpc.is_set() {
            return Err(PlanError::GrpcOptions(scheme));
        }
        self.check_sources()?;
        for s in &self.strategies {
            if s.pipeline_depth().is_some() && protocol != Scheme::Http {
                return Err(PlanError::PipelineScheme(s.to_string(), scheme));
            }
            if s.client_protocol().is_some_and(|ok| ok != protocol) {
                return Err(PlanError::ClientPool {
                    strategy: s.kind().to_string(),
                    scheme,
                });
            }
        }
        Ok(())
    }

    /// `--source`: addresses that parse, on a target poolbench dials.
    fn check_sources(&self) -> Result<(), PlanError> {
        let sources = &self.target_options.source;
        if sources.is_empty() {
            return Ok(());
        }
        let scheme = self.target.scheme.as_str();
        // mysql_async dials its own connections.
        if self.target.protocol() == crate::Scheme::Mysql {
            return Err(PlanError::SourceTarget(scheme.to_string()));
        }
        expand_sources(sources)
            .map(|_| ())
            .map_err(PlanError::Source)
    }

    /// `--stop-on-slo`: an SLO to judge by, levels to climb, one process.
    fn check_stop_on_slo(&self) -> Result<(), PlanError> {
        if !self.stop_on_slo {
            return Ok(());
        }
        if self.slo.is_none() {
            return Err(PlanError::StopWithoutSlo);
        }
        let mut levels = self.concurrency.clone();
        levels.sort_unstable();
        levels.dedup();
        if levels.len() < 2 {
            return Err(PlanError::StopWithoutClimb);
        }
        if self.shard.is_some() {
            return Err(PlanError::StopSharded);
        }
        Ok(())
    }

    /// A rate above zero; batches that fit the request budget.
    fn check_load(&self) -> Result<(), PlanError> {
        match self.load {
            LoadModel::Open { rate, .. } if !(rate > 0.0 && rate.is_finite()) => {
                Err(PlanError::ZeroRate)
            }
            LoadModel::Batch { size, samples } if size == 0 || samples == 0 => {
                Err(PlanError::ZeroBatch)
            }
            LoadModel::Batch { size, samples } => match self.requests {
                Some(budget) if size.saturating_mul(samples) > budget => {
                    Err(PlanError::SamplesOverBudget {
                        samples,
                        size,
                        needed: size.saturating_mul(samples),
                        budget,
                    })
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }
}
