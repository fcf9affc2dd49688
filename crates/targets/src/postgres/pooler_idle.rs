//! A PgBouncer in front of PostgreSQL: its admin console (the `pgbouncer`
//! database, for a user in its `stats_users` or `admin_users`) says how
//! long it keeps an idle client (`client_idle_timeout`; 0: for ever) and
//! how long its own server connections idle and live
//! (`server_idle_timeout`, `server_lifetime`, which close no client).
use super::PgTarget;
use poolbench_model::{ServerIdle, ServerTimeout};
use tokio_postgres::SimpleQueryMessage;

/// The console's settings that bound a connection's idle time or life.
const SETTINGS: [&str; 3] = [
    "client_idle_timeout",
    "server_idle_timeout",
    "server_lifetime",
];

impl PgTarget {
    /// The pooler's idle limits, when the target is a PgBouncer whose
    /// console this user may read (`None` otherwise: a plain server has no
    /// `pgbouncer` database).
    pub(crate) async fn pooler_idle(&self) -> Option<ServerIdle> {
        let console = self.pipelined.client_to("pgbouncer").await.ok()?;
        let rows = console.simple_query("SHOW CONFIG").await.ok()?;
        let mut idle = ServerIdle {
            source: "PgBouncer client_idle_timeout".into(),
            ..ServerIdle::default()
        };
        for row in rows {
            let SimpleQueryMessage::Row(row) = row else {
                continue;
            };
            let (Some(key), Some(value)) = (row.get(0), row.get(1)) else {
                continue;
            };
            let Some(seconds) = SETTINGS.contains(&key).then(|| seconds(value)).flatten() else {
                continue;
            };
            match key {
                "client_idle_timeout" => idle.idle_close_s = (seconds > 0.0).then_some(seconds),
                _ => idle.other.push(ServerTimeout {
                    name: format!("PgBouncer {key}"),
                    seconds,
                }),
            }
        }
        if idle.idle_close_s.is_none() {
            idle.note = Some("PgBouncer's client_idle_timeout is 0: idle clients are kept".into());
        }
        Some(idle)
    }
}

/// A console value in seconds: plain seconds (`600`), or with a unit
/// (`600s`, `10min`, `1h`, `500ms`) as newer versions show them.
fn seconds(value: &str) -> Option<f64> {
    let v = value.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().ok()?;
    let per = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return None,
    };
    Some(n * per)
}

#[cfg(test)]
mod tests {
    use super::seconds;

    #[test]
    fn console_values_in_seconds() {
        assert_eq!(seconds("600"), Some(600.0));
        assert_eq!(seconds("600s"), Some(600.0));
        assert_eq!(seconds("10min"), Some(600.0));
        assert_eq!(seconds("1h"), Some(3600.0));
        assert_eq!(seconds("0"), Some(0.0));
        assert_eq!(seconds("on"), None);
    }
}
