//! The pool's own types: the strategies it runs, by name ([`PoolSpec`]:
//! `pool:8`, `elastic:4+4` …), its configuration, and the counters it keeps. Plain
//! data with serde; with the `schema` feature, JSON Schemas too (poolbench's
//! result model turns it on). `poolbench-pool` builds on these alone.
//!
//! How the crates meet: the map in `poolbench_model`'s documentation.
pub mod duration;
mod pool_config;
mod pool_metrics;
mod pool_spec;

pub use pool_config::PoolConfig;
pub use pool_metrics::{IdleClosed, PoolCounters, WaitStats};
pub use pool_spec::{PoolSpec, SpecError, DEFAULT_PIPELINE_DEPTH};

/// The pool's counters under their old name.
#[deprecated(note = "renamed `PoolCounters`")]
pub type MetricsSnapshot = PoolCounters;
