//! Redis's connection limit and the connections it holds, read without
//! load: `CONFIG GET maxclients` less the others of `INFO clients`
//! (`connected_clients`), and `CLIENT LIST`. A server that refuses
//! `CONFIG` (an ACL, a renamed command) is said so.
use super::RedisLoad;
use crate::RequestError;
use poolbench_model::{SeenConnection, ServerLimit, Survey};
use poolbench_pool::Connector;
use redis::aio::MultiplexedConnection;
use std::collections::HashMap;

pub(crate) async fn survey(t: &RedisLoad) -> Result<Survey, RequestError> {
    let mut handle = t.pipelined.connect().await?;
    let conn = handle.connection();
    let mut refused = Vec::new();
    let max: Option<u64> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxclients")
        .query_async::<HashMap<String, String>>(conn)
        .await
        .map_err(|e| refused.push(format!("CONFIG GET maxclients: {e}")))
        .ok()
        .and_then(|m| m.get("maxclients").and_then(|v| v.parse().ok()));
    let info: Option<String> = redis::cmd("INFO")
        .arg("clients")
        .query_async(conn)
        .await
        .map_err(|e| refused.push(format!("INFO clients: {e}")))
        .ok();
    // This connection is one of those connected.
    let held = info
        .as_deref()
        .and_then(|i| field(i, "connected_clients", '\n', ':'))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|n| n.saturating_sub(1));
    let mut survey = Survey::default();
    match client_list(conn).await {
        Ok(seen) => survey.seen = seen,
        Err(e) => refused.push(format!("CLIENT LIST: {e}")),
    }
    let connections = max.map(|m| m.saturating_sub(held.unwrap_or(0)));
    let source = match (max, held, connections) {
        (Some(m), Some(h), Some(n)) => format!(
            "maxclients {m} − {h} held by others = {n}, from CONFIG GET maxclients and INFO clients"
        ),
        (None, Some(h), _) => format!(
            "Redis refused CONFIG GET maxclients; {h} connections held by others (INFO clients)"
        ),
        _ => "Redis did not say its maxclients".into(),
    };
    survey.limit = ServerLimit {
        server: "redis".into(),
        connections,
        max_connections: max,
        held_by_others: held,
        source,
        refused,
        ..ServerLimit::default()
    };
    Ok(survey)
}

/// `key` of `text`'s `key<sep>value` items separated by `by`.
fn field(text: &str, key: &str, by: char, sep: char) -> Option<String> {
    text.split(by)
        .filter_map(|item| item.trim().split_once(sep))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.trim().to_string())
}

/// Every client but this one, as `CLIENT LIST` shows them.
async fn client_list(conn: &mut MultiplexedConnection) -> redis::RedisResult<Vec<SeenConnection>> {
    let own: i64 = redis::cmd("CLIENT").arg("ID").query_async(conn).await?;
    let list: String = redis::cmd("CLIENT").arg("LIST").query_async(conn).await?;
    Ok(list
        .lines()
        .filter(|l| field(l, "id", ' ', '=').and_then(|v| v.parse::<i64>().ok()) != Some(own))
        .map(|l| {
            let f = |k: &str| field(l, k, ' ', '=').unwrap_or_default();
            let addr = f("addr");
            let flags = f("flags");
            SeenConnection {
                side: "client".into(),
                client: match addr.rsplit_once(':') {
                    Some((h, _)) => h.to_string(),
                    None => addr,
                },
                user: f("user"),
                application: f("name"),
                state: match () {
                    _ if flags.contains('b') => "blocked".into(),
                    _ if flags.contains('P') => "pubsub".into(),
                    _ if flags.contains('S') => "replica".into(),
                    _ => "idle".into(),
                },
                idle_s: f("idle").parse().ok(),
            }
        })
        .collect())
}
