//! What the HTTP/1.1 pipelining probe (`--pipeline`) saw: whether the
//! server answers pipelined requests in one write.
use serde::{Deserialize, Serialize};

/// What the probe saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PipelineProbe {
    /// Requests sent ahead per round.
    pub depth: usize,
    pub rounds: usize,
    /// Reads that brought at least one whole response.
    pub reads: u64,
    pub responses: u64,
    /// Reads that completed more than one response.
    pub batched_reads: u64,
    pub mean_per_read: f64,
}

impl PipelineProbe {
    /// Most reads carry several responses.
    pub fn suspect_batching(&self) -> bool {
        self.reads > 0 && self.mean_per_read >= 1.5 && self.batched_reads * 2 >= self.reads
    }
}
