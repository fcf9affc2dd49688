//! Reading a poolbench result: the findings that make its numbers lie
//! (one file each under `findings/`, their thresholds as functions that
//! `poolbench-tune` calls rather than keeping numbers of its own), the
//! recommendation, SLO breaches, the USL fits, ramp summaries, a census of
//! a server's connections, and the merge of several processes' results. Pure functions of the result: no runtime, no I/O; tested on
//! hand-built results as well as live ones. [`analyze`] is the one entry
//! every command uses.
//!
//! How the crates meet: the map in `poolbench_model`'s documentation.
#![forbid(unsafe_code)]

mod analyze;
mod census;
mod client_check;
pub mod client_idle;
mod client_libs;
pub mod findings;
mod merge;
mod ramp_summary;
mod recommend;
mod shard_merge;
mod usl;

pub use analyze::analyze;
pub use census::{census, idle_band};
pub use client_check::{client_check, CheckSetup};
pub use client_libs::{client_keys, client_lib, ClientLib, CLIENT_LIBS};
pub use findings::{find_all, outages, Check, Outage, CHECKS};
pub use merge::merge;
pub use ramp_summary::summarize as summarize_ramp;
pub use recommend::recommend;
pub use usl::{usl_fits, USL_MIN_LEVELS};
