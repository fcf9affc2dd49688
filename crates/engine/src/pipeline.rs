//! Re-exported: the pipelining probe's findings are part of the result.
pub use poolbench_targets::pipeline::PipelineProbe;
