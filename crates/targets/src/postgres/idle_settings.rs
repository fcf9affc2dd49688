//! What a PostgreSQL server does with idle sessions: its
//! `idle_session_timeout` (PostgreSQL 14 on; 0: never) and
//! `idle_in_transaction_session_timeout`, as this session sees them (a
//! role's or database's own value included).
use super::PgTarget;
use crate::RequestError;
use poolbench_model::{ServerIdle, ServerTimeout};

const QUERY: &str = "SELECT name, setting FROM pg_settings \
    WHERE name IN ('idle_session_timeout', 'idle_in_transaction_session_timeout')";

impl PgTarget {
    /// The server's idle limits, read on a new session; a PgBouncer's
    /// own where the target is one (the server's behind it kept beside).
    pub async fn server_idle(&self) -> Result<ServerIdle, RequestError> {
        let server = self.postgres_idle().await?;
        Ok(match self.pooler_idle().await {
            Some(mut pooler) => {
                if let Some(s) = server.idle_close_s {
                    pooler.other.push(ServerTimeout {
                        name: "idle_session_timeout (behind PgBouncer)".into(),
                        seconds: s,
                    });
                }
                pooler
            }
            None => server,
        })
    }

    async fn postgres_idle(&self) -> Result<ServerIdle, RequestError> {
        let client = self.pipelined.client().await?;
        let rows = client
            .simple_query(QUERY)
            .await
            .map_err(|e| super::classify(&e))?;
        let mut idle = ServerIdle {
            source: "idle_session_timeout".into(),
            ..ServerIdle::default()
        };
        for row in rows {
            let tokio_postgres::SimpleQueryMessage::Row(row) = row else {
                continue;
            };
            let (Some(name), Some(ms)) =
                (row.get(0), row.get(1).and_then(|v| v.parse::<f64>().ok()))
            else {
                continue;
            };
            match name {
                "idle_session_timeout" => idle.idle_close_s = (ms > 0.0).then_some(ms / 1000.0),
                _ => idle.other.push(ServerTimeout {
                    name: name.to_string(),
                    seconds: ms / 1000.0,
                }),
            }
        }
        if idle.idle_close_s.is_none() {
            idle.note = Some(
                "idle_session_timeout is 0 (or this server predates it): idle sessions are kept"
                    .into(),
            );
        }
        Ok(idle)
    }
}
