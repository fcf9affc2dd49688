//! What the survey's queries share (`limits.rs`, `pgbouncer.rs`): the
//! name its sessions carry, and a simple-protocol query's rows.
use super::client::classify;
use tokio_postgres::{Client, SimpleQueryMessage, SimpleQueryRow};

/// The `application_name` of the survey's own sessions, left out of
/// what it lists.
pub(crate) const SURVEY_APPLICATION: &str = "poolbench-survey";

/// The rows of `sql` (simple protocol); the server's refusal in words.
pub(crate) async fn rows(client: &Client, sql: &str) -> Result<Vec<SimpleQueryRow>, String> {
    let messages = client
        .simple_query(sql)
        .await
        .map_err(|e| classify(&e).message)?;
    Ok(messages
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .collect())
}
