//! A database's or pooler's survey (its connection limit and the
//! connections it holds), read once without load, for `tune --replicas`
//! and `census`. A server that cannot be reached is bad input (exit 2).
use crate::Failure;
use poolbench_model::{Survey, TargetOptions};
use poolbench_targets::{AnyTarget, TargetSpec};
use std::time::Duration;

/// The survey of `spec`'s server; `None` for HTTP and gRPC.
pub(crate) fn read(
    spec: &TargetSpec,
    options: &TargetOptions,
    connect_timeout: Duration,
) -> Result<Option<Survey>, Failure> {
    if !spec.protocol().has_survey() {
        return Ok(None);
    }
    let unreachable =
        |why: String| Failure::input(format!("cannot reach {}: {why}", spec.redacted()));
    let addr = poolbench_targets::resolve(spec).map_err(|e| unreachable(e.to_string()))?;
    let target = AnyTarget::open(spec, addr, options, connect_timeout)
        .map_err(|e| Failure::input(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::runtime(format!("cannot start a runtime: {e}")))?;
    // Each query is one round trip: a server that answers slower than
    // this is not one to read limits from.
    let limit = connect_timeout + Duration::from_secs(10);
    runtime.block_on(async {
        match tokio::time::timeout(limit, poolbench_targets::survey::survey(&target)).await {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(unreachable(e.message)),
            Err(_) => Err(unreachable(format!(
                "no answer within {} s",
                limit.as_secs()
            ))),
        }
    })
}
