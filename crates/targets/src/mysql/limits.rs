//! MySQL's and MariaDB's connection limit and the connections they hold,
//! read without load: `max_connections` (and `max_user_connections`)
//! less the others of `Threads_connected`; the connections from
//! `information_schema.PROCESSLIST` (all of them with the PROCESS
//! privilege, this user's own without).
use super::MysqlTarget;
use crate::RequestError;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row};
use poolbench_model::{SeenConnection, ServerLimit, Survey};

pub(crate) async fn survey(t: &MysqlTarget) -> Result<Survey, RequestError> {
    let mut session = t.session().await?;
    let conn = session.conn();
    let mut refused = Vec::new();
    let settings: Option<(Option<u64>, Option<u64>)> = conn
        .query_first("SELECT @@max_connections, @@max_user_connections")
        .await
        .map_err(|e| refused.push(format!("@@max_connections: {e}")))
        .ok()
        .flatten();
    let (max, per_user) = settings.unwrap_or((None, None));
    let threads: Option<u64> = conn
        .query_first::<(String, String), _>("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
        .await
        .map_err(|e| refused.push(format!("Threads_connected: {e}")))
        .ok()
        .flatten()
        .and_then(|(_, v)| v.parse().ok());
    // This session is one of the threads connected.
    let held = threads.map(|n| n.saturating_sub(1));
    let mut survey = Survey::default();
    match processlist(conn).await {
        Ok(seen) => survey.seen = seen,
        Err(e) => refused.push(format!("information_schema.PROCESSLIST: {e}")),
    }
    if let Some(h) = held.filter(|&h| h > survey.seen.len() as u64) {
        survey.notes.push(format!(
            "{} of the {h} other connections are not listed: the PROCESS privilege shows every user's",
            h - survey.seen.len() as u64
        ));
    }
    let connections = max.map(|m| m.saturating_sub(held.unwrap_or(0)));
    let mut source = match (max, held, connections) {
        (Some(m), Some(h), Some(n)) => format!(
            "max_connections {m} − {h} held by others = {n}, from @@max_connections and Threads_connected"
        ),
        (Some(m), None, _) => format!("max_connections {m}, from @@max_connections (connections held unknown)"),
        _ => "the server did not say its max_connections".into(),
    };
    if let Some(u) = per_user.filter(|&u| u > 0) {
        source.push_str(&format!("; max_user_connections {u} per user"));
    }
    let connections = match per_user.filter(|&u| u > 0) {
        Some(u) => connections.map(|n| n.min(u)),
        None => connections,
    };
    survey.limit = ServerLimit {
        server: "mysql".into(),
        connections,
        max_connections: max,
        held_by_others: held,
        source,
        refused,
        ..ServerLimit::default()
    };
    Ok(survey)
}

/// Every client thread but this one.
async fn processlist(conn: &mut Conn) -> Result<Vec<SeenConnection>, mysql_async::Error> {
    let rows: Vec<Row> = conn
        .query(
            "SELECT HOST, USER, COALESCE(DB, ''), COMMAND, TIME FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump') \
             AND USER NOT IN ('system user', 'event_scheduler')",
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let text = |i: usize| {
                r.get_opt::<String, _>(i)
                    .and_then(Result::ok)
                    .unwrap_or_default()
            };
            let host = text(0);
            let command = text(3);
            SeenConnection {
                side: "client".into(),
                client: match host.rsplit_once(':') {
                    Some((h, _)) => h.to_string(),
                    None => host,
                },
                user: text(1),
                application: text(2),
                state: match command.as_str() {
                    "Sleep" => "idle".into(),
                    _ => command.to_lowercase(),
                },
                idle_s: r.get_opt::<f64, _>(4).and_then(Result::ok),
            }
        })
        .collect())
}
