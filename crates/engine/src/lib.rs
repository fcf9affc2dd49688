//! The engine: runs a [`Plan`] (strategies × concurrency × pool sizes)
//! against a target and returns one [`RunResult`]. It measures and never
//! prints; progress goes to an [`Events`] sink the caller supplies.
#![forbid(unsafe_code)]

mod assemble;
mod batch;
mod cell;
mod checkout;
mod closed;
mod cpu;
mod exchange;
mod findings;
mod hiccup;
pub mod interrupt;
mod intervals;
mod load;
mod machine;
mod merge;
mod open;
mod pipeline;
mod plan;
mod precise;
mod probe;
mod ramp;
mod record;
mod result;
mod runner;
mod shard;
mod shard_merge;
mod slo;
mod stats;
mod thread_recorders;
mod threads;
mod timeline;

pub use batch::Sample;
pub use findings::{
    outages, pitfalls, recommend, usl_fits, Outage, Pitfall, Recommendation, UslFit,
};
pub use intervals::LatencyInterval;
pub use load::{Arrival, LoadModel};
pub use machine::Machine;
pub use merge::merge;
pub use pipeline::PipelineProbe;
pub use plan::{CellSpec, Plan, PlanError};
pub use probe::{DbPoolCounters, ServerCounters, ServerProbe};
pub use ramp::{Ramp, RampSecond, RampSummary, Stage};
pub use record::{decode_histogram, encode_histogram, Summary};
pub use result::{
    result_schema, CellResult, Connections, Errors, Histograms, RunResult, ShardPart,
    SCHEMA_VERSION,
};
pub use runner::{run, EngineError, Events, NoEvents};
pub use shard::{parse_start, plan_hash, Schedule, Shard, ShardStamp, SplitError};
pub use slo::Slo;
pub use stats::mean_ci95;
pub use timeline::{Stall, Timeline, BUCKET};
