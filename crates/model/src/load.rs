//! Load models: closed loop, open loop at a rate, batch samples.
use serde::{Deserialize, Serialize};

/// How requests are issued.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LoadModel {
    /// c workers, each: acquire, request, release, again.
    Closed,
    /// Requests at a fixed rate whatever the answers; latency counts from
    /// the intended send time. At most `concurrency` in flight.
    Open {
        /// Requests per second.
        rate: f64,
        arrival: Arrival,
    },
    /// `size` requests at concurrency c timed as one sample, repeated: at
    /// least `samples` samples, and for at least the duration.
    Batch { size: u64, samples: u64 },
}

/// Gaps between open-loop arrivals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps (a Poisson process).
    Poisson,
}

impl LoadModel {
    /// The model's name in results.
    pub fn name(&self) -> &'static str {
        match self {
            LoadModel::Closed => "closed",
            LoadModel::Open { .. } => "open",
            LoadModel::Batch { .. } => "batch",
        }
    }
}
