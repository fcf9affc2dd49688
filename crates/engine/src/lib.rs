//! The engine: runs a [`Plan`] (strategies × concurrency × pool sizes)
//! against a target and returns one [`RunResult`]. It measures and never
//! prints; progress goes to an [`Events`] sink the caller supplies.
#![forbid(unsafe_code)]

mod cell;
mod machine;
mod plan;
mod probe;
mod record;
mod result;
mod runner;

pub use machine::Machine;
pub use plan::{CellSpec, Plan, PlanError};
pub use probe::{ServerCounters, ServerProbe};
pub use record::{decode_histogram, encode_histogram, Summary};
pub use result::{CellResult, Connections, Errors, Histograms, RunResult, SCHEMA_VERSION};
pub use runner::{run, EngineError, Events, NoEvents};
