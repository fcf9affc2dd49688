//! What the server does with idle connections, per protocol (each
//! protocol's own file reads or measures it).
use crate::{AnyTarget, RequestError};
use poolbench_model::ServerIdle;
use std::time::Duration;

impl AnyTarget {
    /// The server's idle close: read from its settings (PostgreSQL, MySQL,
    /// Redis, an HTTP `Keep-Alive` header), else measured over plain
    /// HTTP/1.1 with gaps up to `probe` (`None`: not measured), ending by
    /// `within`. `None` for protocols it is not looked at for.
    pub async fn server_idle(
        &self,
        probe: Option<Duration>,
        within: Duration,
    ) -> Result<Option<ServerIdle>, RequestError> {
        Ok(Some(match self {
            AnyTarget::Http1(t) => t.server_idle(probe, within).await?,
            AnyTarget::Postgres(t, _) => t.server_idle().await?,
            AnyTarget::Mysql(t) => t.server_idle().await?,
            AnyTarget::Redis(t) => t.server_idle().await?,
            _ => return Ok(None),
        }))
    }
}
