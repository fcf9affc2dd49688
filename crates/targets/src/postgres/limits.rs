//! PostgreSQL's connection limit and the connections it holds, read
//! without load: `max_connections` less `superuser_reserved_connections`
//! (and `reserved_connections`, PostgreSQL 16 on) less the client
//! backends others hold (`pg_stat_activity`). A server reached through
//! PgBouncer (its port is not the one dialed) is read at the pooler's
//! admin console instead (`pgbouncer.rs`).
use super::survey_query::{rows, SURVEY_APPLICATION};
use super::PgTarget;
use crate::RequestError;
use poolbench_model::{SeenConnection, ServerLimit, Survey};
use tokio_postgres::Client;

/// The server's limit and connections, as far as it lets this login see.
pub(crate) async fn survey(t: &PgTarget) -> Result<Survey, RequestError> {
    let (db, port) = t.pipelined.database_and_port();
    if db == "pgbouncer" {
        let admin = t.pipelined.for_survey(SURVEY_APPLICATION, None);
        return super::pgbouncer::survey(&admin, None).await;
    }
    let client = t
        .pipelined
        .for_survey(SURVEY_APPLICATION, None)
        .client()
        .await?;
    let settings = rows(
        &client,
        "SELECT current_setting('max_connections'), current_setting('superuser_reserved_connections'), \
         current_setting('reserved_connections', true), inet_server_port()",
    )
    .await;
    let settings = match settings {
        Ok(r) => r,
        Err(e) => return Ok(refused_all(e)),
    };
    let first = settings.first();
    let num = |i: usize| {
        first
            .and_then(|r| r.get(i))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let server_port = num(3);
    let mut pooler = None;
    if let (Some(dialed), Some(server)) = (port, server_port) {
        if dialed as u64 != server {
            // A pooler between: its own limits are the ones a client meets.
            let admin = t
                .pipelined
                .for_survey(SURVEY_APPLICATION, Some("pgbouncer"));
            match super::pgbouncer::survey(&admin, Some(&db)).await {
                Ok(mut s) => {
                    s.notes.push(format!(
                        "PgBouncer at port {dialed} in front of PostgreSQL at port {server}: the pooler's limits apply"
                    ));
                    return Ok(s);
                }
                Err(e) => pooler = Some(format!(
                    "a pooler at port {dialed} in front of PostgreSQL at port {server} (its admin console: {}): PostgreSQL's own limits follow",
                    e.message
                )),
            }
        }
    }
    let max = num(0);
    let mut survey = Survey::default();
    survey.notes.extend(pooler);
    match activity(&client).await {
        Ok(seen) => survey.seen = seen,
        Err(e) => survey.limit.refused.push(format!("pg_stat_activity: {e}")),
    }
    let hidden = survey.seen.iter().filter(|c| c.state.is_empty()).count();
    if hidden > 0 {
        survey.notes.push(format!(
            "{hidden} connections of other roles listed without their state or address (pg_read_all_stats shows them)"
        ));
    }
    let held = survey
        .limit
        .refused
        .is_empty()
        .then_some(survey.seen.len() as u64);
    survey.limit = limit(max, num(1).unwrap_or(0), num(2), held, survey.limit.refused);
    Ok(survey)
}

/// The limit in words: "max_connections 100 − 3 reserved − 5 held by
/// others = 92, from pg_settings".
fn limit(
    max: Option<u64>,
    superuser: u64,
    reserved: Option<u64>,
    held: Option<u64>,
    refused: Vec<String>,
) -> ServerLimit {
    let all_reserved = superuser + reserved.unwrap_or(0);
    let connections = max.map(|m| {
        m.saturating_sub(all_reserved)
            .saturating_sub(held.unwrap_or(0))
    });
    let reserved_words = match reserved {
        Some(r) if r > 0 => format!("{superuser} superuser-reserved − {r} reserved"),
        _ => format!("{superuser} reserved"),
    };
    let source = match (max, held, connections) {
        (Some(m), Some(h), Some(n)) => format!(
            "max_connections {m} − {reserved_words} − {h} held by others = {n}, from pg_settings and pg_stat_activity"
        ),
        (Some(m), None, Some(n)) => format!(
            "max_connections {m} − {reserved_words} = {n}, from pg_settings (connections held by others unknown)"
        ),
        _ => "PostgreSQL did not say its max_connections".to_string(),
    };
    ServerLimit {
        server: "postgresql".into(),
        connections,
        max_connections: max,
        reserved: all_reserved,
        held_by_others: held,
        serves_at_once: None,
        source,
        refused,
    }
}

fn refused_all(why: String) -> Survey {
    Survey {
        limit: ServerLimit {
            server: "postgresql".into(),
            source: format!("PostgreSQL refused to say its limits: {why}"),
            refused: vec![why],
            ..ServerLimit::default()
        },
        ..Survey::default()
    }
}

/// Every client backend but this one.
async fn activity(client: &Client) -> Result<Vec<SeenConnection>, String> {
    let sql = "SELECT coalesce(host(client_addr), CASE WHEN client_port = -1 THEN 'local' ELSE '' END), \
               coalesce(usename, ''), coalesce(application_name, ''), coalesce(state, ''), \
               extract(epoch FROM now() - coalesce(state_change, backend_start))::float8 \
               FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
    let rows = rows(client, sql).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let text = |i: usize| r.get(i).unwrap_or_default().to_string();
            let state = text(3);
            SeenConnection {
                side: "client".into(),
                client: text(0),
                user: text(1),
                application: text(2),
                idle_s: (!state.is_empty())
                    .then(|| r.get(4).and_then(|v| v.parse().ok()))
                    .flatten(),
                state,
            }
        })
        .collect())
}
