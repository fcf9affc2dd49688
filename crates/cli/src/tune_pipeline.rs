//! `tune -s pipeline`: before the search, whether the server answers
//! pipelined HTTP/1.1 requests at all (the `--pipeline` probe, on a
//! connection of its own); a server that closes, stops answering or
//! answers garbled is named and the family skipped with the reason.
use crate::tune_args::TuneArgs;
use poolbench_model::{Plan, TuneLoad};
use std::time::Duration;

/// The families to skip, with why: `pipeline`, when it was asked for and
/// the server does not answer pipelined requests (said on stderr too).
pub(crate) fn skipped(a: &TuneArgs, base: &Plan, load: TuneLoad) -> Vec<(String, String)> {
    let asked = a
        .strategy
        .iter()
        .any(|s| matches!(s, poolbench_model::StrategySpec::Pipeline(..)));
    let TuneLoad::Concurrency(c) = load else {
        return Vec::new();
    };
    if !asked {
        return Vec::new();
    }
    let timeout = a.timeout.max(Duration::from_secs(2));
    match refused(base, probe_depth(c), timeout) {
        Some(why) => {
            if !a.quiet {
                eprintln!("pipeline: skipped: {why}");
            }
            vec![("pipeline".into(), why)]
        }
        None => Vec::new(),
    }
}

/// Requests the probe writes ahead: the depth the search will use at the
/// client's load on two connections, at most 16 (a server that answers
/// 16 in order answers more).
fn probe_depth(in_flight: usize) -> usize {
    in_flight.div_ceil(2).clamp(2, 16)
}

/// `Some(why)` when the family must be skipped: the server did not
/// answer `depth` pipelined requests, in order, within `timeout`.
fn refused(plan: &Plan, depth: usize, timeout: Duration) -> Option<String> {
    let answer = (|| -> Result<(), String> {
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
    })();
    answer.err().map(|e| {
        format!("the server does not answer pipelined requests ({depth} written ahead on one connection: {e}); a pool of connections is the way to this server")
    })
}
