//! One timed sample of a cell: a batch, or a repetition.
use serde::{Deserialize, Serialize};

/// One timed sample: a batch, or a repetition of a whole cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sample {
    pub throughput_rps: f64,
    pub p99_us: f64,
}
