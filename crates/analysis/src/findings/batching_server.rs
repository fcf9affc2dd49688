//! `batching-server`: the pipelining probe (`--pipeline`) found a server
//! that answers pipelined requests in one write.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::BatchingServer,
    title: "the server answers pipelined requests in one write: pipelined throughput says nothing about a real API",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let Some(p) = run
        .result
        .pipeline
        .as_ref()
        .filter(|p| p.suspect_batching())
    else {
        return Vec::new();
    };
    vec![Evidence::run(format!(
        "{} pipelined requests per round: {:.1} responses per read on average, {} of {} reads carried several",
        p.depth, p.mean_per_read, p.batched_reads, p.reads
    ))]
}
