//! What a Redis server does with idle clients: `CONFIG GET timeout`
//! (seconds; 0: never).
use super::RedisLoad;
use crate::RequestError;
use poolbench_model::ServerIdle;
use poolbench_pool::Connector;

impl RedisLoad {
    /// The server's idle close, read on a new connection; a server that
    /// refuses CONFIG (renamed, ACLs) says so in the note.
    pub async fn server_idle(&self) -> Result<ServerIdle, RequestError> {
        let mut conn = self.pipelined.connect().await?;
        let reply: Result<Vec<String>, _> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("timeout")
            .query_async(conn.connection())
            .await;
        let mut idle = ServerIdle {
            source: "timeout (CONFIG GET)".into(),
            ..ServerIdle::default()
        };
        match reply {
            Ok(pair) => {
                let secs = pair.get(1).and_then(|v| v.parse::<f64>().ok());
                idle.idle_close_s = secs.filter(|s| *s > 0.0);
                if secs == Some(0.0) {
                    idle.note = Some("timeout is 0: idle clients are kept".into());
                }
            }
            Err(e) => idle.note = Some(format!("CONFIG GET timeout refused: {e}")),
        }
        Ok(idle)
    }
}
