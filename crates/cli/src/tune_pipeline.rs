//! `tune -s pipeline`: whether the server answers pipelined HTTP/1.1
//! requests at all, asked by the search before any load
//! (`poolbench_tune::Probes::pipeline`) and read here with the
//! `--pipeline` probe, on a connection of its own.
use crate::tune_args::TuneArgs;
use poolbench_model::Plan;
use std::time::Duration;

/// The probe's answer timeout when `-s pipeline` was asked for; `None`
/// otherwise.
pub(crate) fn asked(a: &TuneArgs) -> Option<Duration> {
    a.strategy
        .iter()
        .any(|s| matches!(s, poolbench_model::StrategySpec::Pipeline(..)))
        .then(|| a.timeout.max(Duration::from_secs(2)))
}

/// `Err(what happened)` when the server did not answer `depth`
/// pipelined requests, in order, within `timeout`.
pub(crate) fn probe(plan: &Plan, depth: usize, timeout: Duration) -> Result<(), String> {
    let addr = poolbench_targets::resolve(&plan.target).map_err(|e| e.to_string())?;
    let sources = poolbench_targets::Sources::of_options(&plan.target_options, addr)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime
        .block_on(poolbench_targets::pipeline::probe(
            &sources,
            addr,
            (&plan.target.authority, &plan.target.path),
            depth,
            // GET and HEAD alternated: answers out of order show.
            true,
            timeout,
        ))
        .map(|_| ())
}
