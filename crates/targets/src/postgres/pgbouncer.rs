//! PgBouncer's limits and connections, from its admin console (the
//! database `pgbouncer`; the login must be in `admin_users` or
//! `stats_users`): `SHOW CONFIG` (`max_client_conn`, `default_pool_size`,
//! `max_db_connections`), `SHOW DATABASES` (the pool of the database
//! used), `SHOW CLIENTS` and `SHOW SERVERS`.
use super::client::PostgresTarget;
use super::survey_query::{rows, SURVEY_APPLICATION};
use poolbench_model::{seconds_since, SeenConnection, ServerLimit, Survey};
use std::collections::HashMap;
use tokio_postgres::{Client, SimpleQueryRow};

/// The pooler's limit and connections; `db`: the database whose pool the
/// client uses (none: the admin console itself was the target).
pub(crate) async fn survey(
    admin: &PostgresTarget,
    db: Option<&str>,
) -> Result<Survey, crate::RequestError> {
    let client = admin.client().await?;
    let config = match rows(&client, "SHOW CONFIG").await {
        Ok(r) => config_map(&r),
        Err(e) => return Err(crate::RequestError::protocol(format!("SHOW CONFIG: {e}"))),
    };
    let mut survey = Survey::default();
    let mut refused = Vec::new();
    for (side, sql) in [("client", "SHOW CLIENTS"), ("server", "SHOW SERVERS")] {
        match listed(&client, sql, side).await {
            Ok(mut seen) => survey.seen.append(&mut seen),
            Err(e) => refused.push(format!("{sql}: {e}")),
        }
    }
    let pool = match db {
        Some(db) => pool_of(&client, db).await,
        None => None,
    };
    let num = |k: &str| config.get(k).and_then(|v| v.parse::<u64>().ok());
    let max = num("max_client_conn");
    let held = refused
        .is_empty()
        .then(|| survey.seen.iter().filter(|c| c.side == "client").count() as u64);
    let per_db = num("max_db_connections").filter(|&n| n > 0);
    let serves = pool
        .or(num("default_pool_size"))
        .map(|p| per_db.map_or(p, |d| p.min(d)));
    let connections = max.map(|m| m.saturating_sub(held.unwrap_or(0)));
    let mut source = match (max, held, connections) {
        (Some(m), Some(h), Some(n)) => format!(
            "max_client_conn {m} − {h} held by other clients = {n}, from PgBouncer's SHOW CONFIG and SHOW CLIENTS"
        ),
        (Some(m), None, _) => format!("max_client_conn {m}, from PgBouncer's SHOW CONFIG (clients held unknown)"),
        _ => "PgBouncer did not say its max_client_conn".into(),
    };
    if let Some(s) = serves {
        source.push_str(&format!(
            "; {s} server connections per pool (default_pool_size{}): more in flight wait in PgBouncer",
            if per_db.is_some() { ", max_db_connections" } else { "" }
        ));
    }
    survey.limit = ServerLimit {
        server: "pgbouncer".into(),
        connections,
        max_connections: max,
        held_by_others: held,
        serves_at_once: serves,
        source,
        refused,
        ..ServerLimit::default()
    };
    Ok(survey)
}

fn config_map(rows: &[SimpleQueryRow]) -> HashMap<String, String> {
    rows.iter()
        .filter_map(|r| {
            let k = field(r, "key")?;
            Some((k, field(r, "value").unwrap_or_default()))
        })
        .collect()
}

/// A column by name, where this PgBouncer version has it.
fn field(r: &SimpleQueryRow, name: &str) -> Option<String> {
    let i = r.columns().iter().position(|c| c.name() == name)?;
    r.get(i).map(str::to_string)
}

/// `SHOW CLIENTS` or `SHOW SERVERS` as connections on `side`.
async fn listed(client: &Client, sql: &str, side: &str) -> Result<Vec<SeenConnection>, String> {
    // The survey's own sessions are among the clients listed: named
    // where this PgBouncer shows application names, else the console's.
    let all = rows(client, sql).await?;
    let named = all.iter().any(|r| field(r, "application_name").is_some());
    let mut console = side == "client" && !named;
    Ok(all
        .iter()
        .filter(|r| {
            if field(r, "application_name").as_deref() == Some(SURVEY_APPLICATION) {
                return false;
            }
            let skip = console && field(r, "database").as_deref() == Some("pgbouncer");
            console &= !skip;
            !skip
        })
        .map(|r| {
            let f = |n: &str| field(r, n).unwrap_or_default();
            let state = f("state");
            // `active` clients between transactions are idle since their
            // last request.
            let idle_s = field(r, "request_time").and_then(|t| seconds_since(&t));
            SeenConnection {
                side: side.into(),
                client: f("addr"),
                user: f("user"),
                application: f("application_name"),
                state: match (
                    state.as_str(),
                    field(r, "link").unwrap_or_default().is_empty(),
                ) {
                    ("active", true) => "idle".into(),
                    _ => state,
                },
                idle_s,
            }
        })
        .collect())
}

/// The server connections of `db`'s pool (`SHOW DATABASES` pool_size).
async fn pool_of(client: &Client, db: &str) -> Option<u64> {
    let rows = rows(client, "SHOW DATABASES").await.ok()?;
    rows.iter()
        .find(|r| field(r, "name").as_deref() == Some(db))
        .and_then(|r| field(r, "pool_size"))
        .and_then(|v| v.parse().ok())
}
