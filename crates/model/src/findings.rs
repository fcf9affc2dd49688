//! What the analysis of a run found, as results carry it: the findings
//! with their evidence, the recommendation, the scalability fits.
use serde::{Deserialize, Serialize};

mod explain;
mod id;

pub use explain::{explain, Explanation};
pub use id::{Id, UnknownId};

/// One reason not to trust (part of) a run, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// Which finding it is.
    pub id: Id,
    /// What it means, in one line.
    pub title: String,
    /// The cells it concerns (`strategy c=N`).
    pub cells: Vec<String>,
    /// The numbers that show it, one line per cell or finding.
    pub evidence: Vec<String>,
}

/// The strategy and pool size to use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recommendation {
    pub strategy: String,
    pub pool_size: Option<usize>,
    pub concurrency: usize,
    /// Why this one (`reason` before schema version 3; a result's own
    /// `reason` says why there is none).
    #[serde(alias = "reason")]
    pub why: String,
}

/// The Universal Scalability Law fitted to one strategy's closed-loop cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UslFit {
    pub strategy: String,
    /// Throughput of one worker alone (req/s).
    pub lambda: f64,
    /// Contention: the share of work that serializes.
    pub sigma: f64,
    /// Coherency: the cost each worker adds to every other.
    pub kappa: f64,
    /// Concurrency of the fitted peak, √((1−σ)/κ) (`None`: κ ≈ 0, no peak).
    pub peak_concurrency: Option<f64>,
    /// Fitted throughput at that peak (or at the largest N run).
    pub peak_throughput: f64,
    /// Share of the throughputs' variance the fit explains.
    pub r2: f64,
}
