//! What a poolbench run is and what it produced, as plain data with serde:
//! no runtime, no I/O beyond reading the clock and resolving a host name.
//!
//! - [`Plan`]: what to run (target, strategies × concurrency × pool sizes,
//!   the load model, durations, repetitions), validated
//!   ([`Plan::validate`]), split into shards, given start slots.
//! - [`RunResult`]: what a run measured, cell by cell ([`CellResult`]: HDR
//!   histograms of each phase, timelines, errors by kind, the server's
//!   counters), with the findings and the recommendation the analysis adds.
//! - [`TuneResult`] and [`RateResult`]: `tune`'s points and answer, and
//!   `tune --find-rate`'s. [`Slo`]: the bounds a user asks for
//!   (`p99<50ms,errors<1%`).
//! - [`findings`]: the ids of what makes numbers lie, and their words;
//!   [`InferenceId`]: the ids of tune's inferences.
//!
//! Each result carries a `schema_version`; `poolbench schema run|tune|rate`
//! prints its JSON Schema.
//!
//! How the crates meet (data flows one way: plan → engine → result → analysis
//! → report):
//!
//! | crate | holds |
//! |---|---|
//! | `poolbench-pool-types`, `poolbench-pool` | the strategies (`pool:8`, `shared`, …) and the pool that runs them, protocol-blind |
//! | `poolbench-model` | the plain data every other crate passes on: `Plan`, `RunResult`, `TuneResult`, `RateResult`, `Slo` |
//! | `poolbench-targets` | one connector per protocol, for the pool |
//! | `poolbench-server`, `poolbench-greeter` | the built-in target server, and its gRPC service |
//! | `poolbench-engine` | runs a `Plan` against a target: the load, the measuring, a `RunResult` |
//! | `poolbench-analysis` | reads a `RunResult`: findings, the recommendation, SLO breaches |
//! | `poolbench-tune` | `tune`'s searches over any `Measure` (the engine in the binary, simulated services in tests) and their answer |
//! | `poolbench-report` | renders results, comparisons and explanations: text, JSON, CSV, HTML, Markdown, JUnit, Prometheus |
//! | `poolbench` (crates/cli) | the binary: parses the command, builds the plan, wires the rest |
#![forbid(unsafe_code)]

mod adaptive;
mod census;
mod client_check;
mod client_setting;
pub mod conninfo;
pub mod duration;
mod family;
pub mod findings;
mod fleet;
mod fleet_check;
pub mod format;
mod histogram;
mod idle_reuse;
mod inference;
mod label;
mod latency_interval;
mod live;
mod load;
mod machine;
mod pipeline;
mod plan;
mod ramp;
mod rate;
mod result;
mod sample;
mod scheme;
mod server_counters;
mod shard;
mod slo;
mod slo_check;
mod slo_stop;
mod source;
mod split;
mod start;
mod stats;
mod strategy;
mod target;
mod target_options;
mod timeline;
mod tls_facts;
mod tune;
mod tune_timeouts;
mod validate;

pub use adaptive::AdaptiveBounds;
pub use census::{seconds_since, Census, CensusGroup, SeenConnection, Survey};
pub use client_check::{
    parse_expect, ClientCheck, ClientFinding, ClientWatch, EndedBy, Expect, ExpectKey,
    ExpectationResult,
};
pub use client_setting::ClientSetting;
pub use family::{Family, NoFamily};
pub use findings::{Finding, Recommendation, UslFit};
pub use fleet::{Fleet, FleetRow, Replicas, ServerLimit};
pub use fleet_check::{FleetCheck, FleetRound, FLEET_WITHIN};
pub use histogram::{decode_histogram, encode_histogram, new_histogram, Summary};
pub use idle_reuse::IdleReuse;
pub use inference::InferenceId;
pub use label::cell_label;
pub use latency_interval::LatencyInterval;
pub use live::{LiveCell, LiveCounters, LiveHistogram, LIVE_BOUNDS_NS, LIVE_QUANTILES};
pub use load::{Arrival, LoadModel};
pub use machine::Machine;
pub use pipeline::PipelineProbe;
pub use plan::{CellSpec, Plan};
pub use poolbench_pool_types::{
    IdleClosed, PoolConfig, PoolCounters, PoolSpec, SpecError, WaitStats,
};
pub use ramp::{Ramp, RampSecond, RampSummary, Stage};
pub use rate::{
    rate_schema, FoundRate, RatePhase, RatePoint, RateResult, RateVerdict, RATE_SCHEMA_VERSION,
};
pub use result::{
    result_schema, CellResult, Connections, Errors, Histograms, RunResult, ShardPart, SkippedCell,
    SCHEMA_VERSION,
};
pub use sample::Sample;
pub use scheme::Scheme;
pub use server_counters::{DbPoolCounters, ServerCounters};
pub use shard::{Shard, ShardStamp, SplitError};
pub use slo::{percentile_of, Slo};
pub use slo_check::SloCheck;
pub use slo_stop::SloStop;
pub use source::{expand_sources, MAX_SOURCES};
pub use split::plan_hash;
pub use start::{parse_start, StartSlots};
pub use stats::mean_ci95;
pub use strategy::{Library, RunBy, StrategySpec};
pub use target::TargetSpec;
pub use target_options::{
    GrpcOptions, HttpRequestOptions, HttpVersion, QueryMode, TargetOptions, TlsResume,
};
pub use timeline::{Stall, Timeline, BUCKET};
pub use tls_facts::TlsFacts;
pub use tune::{
    tune_schema, Capacity, CliffKind, CurvePoint, FamilyAnswer, GeneratorThreads, Inference,
    TuneComparison, TuneLoad, TunePhase, TunePoint, TuneRecommendation, TuneResult,
    TUNE_SCHEMA_VERSION,
};
pub use tune_timeouts::{IdleBracket, PoolTimeouts, ServerIdle, ServerTimeout};
pub use validate::PlanError;
