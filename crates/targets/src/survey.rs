//! What a database or pooler says about its connections, without load:
//! its limit and each connection it holds (`tune --replicas`, `census`).
//! One file per protocol does the asking (`postgres/limits.rs`,
//! `postgres/pgbouncer.rs`, `mysql/limits.rs`, `redis/limits.rs`).
use crate::{AnyTarget, RequestError};
use poolbench_model::Survey;

/// The server's survey; `None` for a protocol without a connection limit
/// to read (HTTP, gRPC: the service's knee and cliff alone set the fleet's
/// connection limit).
pub async fn survey(target: &AnyTarget) -> Result<Option<Survey>, RequestError> {
    Ok(Some(match target {
        AnyTarget::Postgres(t, _) => crate::postgres::limits::survey(t).await?,
        AnyTarget::Mysql(t) => crate::mysql::limits::survey(t).await?,
        AnyTarget::Redis(t) => crate::redis::limits::survey(t).await?,
        _ => return Ok(None),
    }))
}
