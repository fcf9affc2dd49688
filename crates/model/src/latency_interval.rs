//! Latency per second of a cell's measured window (`--hdr-log`,
//! `--ramp`), as results hold it.
use serde::{Deserialize, Serialize};

/// One second (or the last, shorter part) of a cell's measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyInterval {
    /// Which second of the measured window, from 0.
    #[serde(default)]
    pub second: u32,
    /// When the interval began, in seconds since the Unix epoch.
    pub start_unix_s: f64,
    pub duration_s: f64,
    /// The latencies completed in it (ns, HdrHistogram V2, base64).
    pub latency_ns: String,
}
