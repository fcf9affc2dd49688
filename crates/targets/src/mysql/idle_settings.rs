//! What a MySQL or MariaDB server does with idle sessions: its
//! `wait_timeout` as a new (non-interactive) session gets it.
use super::MysqlTarget;
use crate::RequestError;
use mysql_async::prelude::Queryable;
use poolbench_model::ServerIdle;

impl MysqlTarget {
    /// The server's idle close, read on a new session.
    pub async fn server_idle(&self) -> Result<ServerIdle, RequestError> {
        let mut session = self.session().await?;
        let wait: Option<u64> = session
            .conn()
            .query_first("SELECT @@wait_timeout")
            .await
            .map_err(|e| super::classify(&e))?;
        Ok(ServerIdle {
            idle_close_s: wait.filter(|s| *s > 0).map(|s| s as f64),
            source: "wait_timeout".into(),
            ..ServerIdle::default()
        })
    }
}
