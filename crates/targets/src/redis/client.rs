//! Redis over the `redis` crate's multiplexed connection: one command per
//! request (`PING` unless told otherwise). The command is split as a shell
//! would (`SET "a key" 'a value'`); an argument may hold `{seq}` or
//! `{random:A..B}`, rendered per request, so a cache or a single hot key
//! cannot flatter the pool.
//!
//! The multiplexed connection pipelines: several callers may send on one
//! connection at once, so `shared` and the other slot strategies multiplex it.
use super::errors::classify;
use super::wire::SessionSetup;
use super::{dial, resp};
use crate::source::Sources;
use crate::template::Template;
use crate::tls::TlsClient;
use crate::{Reply, RequestError, Target, TargetOptions};
use poolbench_pool::Connector;
use redis::aio::MultiplexedConnection;
use redis::{Cmd, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Requests one connection carries at once when shared.
pub const PIPELINE_DEPTH: usize = 1024;

/// Opens connections to one Redis server and sends one command per request.
#[derive(Clone)]
pub struct RedisTarget {
    info: Arc<RedisConnectionInfo>,
    addr: SocketAddr,
    /// `rediss://`: the run's TLS client (one session store).
    tls: Option<TlsClient>,
    /// Local addresses connections are bound to in turn (`--source`).
    sources: Sources,
    command: Arc<Cmd>,
    /// The arguments as templates, when one of them varies.
    varying: Option<Arc<[Template]>>,
    seq: Arc<AtomicU64>,
    text: Arc<str>,
    connect_timeout: Duration,
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTarget")
            .field("command", &self.text)
            .finish_non_exhaustive()
    }
}

/// One Redis connection (a handle to it: handles share the socket).
#[derive(Clone)]
pub struct RedisConn {
    conn: MultiplexedConnection,
    broken: Arc<AtomicBool>,
}

impl RedisConn {
    /// The connection, for callers that send other commands.
    pub fn connection(&mut self) -> &mut MultiplexedConnection {
        &mut self.conn
    }

    /// Never hand this connection (or its other handles) out again.
    pub fn mark_broken(&self) {
        self.broken.store(true, Relaxed);
    }
}

/// Split `GET key` into a command and its arguments, quotes as a shell
/// reads them.
pub fn parse_command(text: &str) -> Result<Cmd, String> {
    let words = split_command(text)?;
    let mut cmd = redis::cmd(&words[0]);
    for w in &words[1..] {
        cmd.arg(w);
    }
    Ok(cmd)
}

fn split_command(text: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(text)
        .ok_or_else(|| format!("invalid Redis command \"{text}\": unbalanced quotes"))?;
    if words.is_empty() {
        return Err("empty Redis command".to_string());
    }
    Ok(words)
}

/// The command's words as templates, if any of them varies.
fn templates(text: &str) -> Result<Option<Arc<[Template]>>, String> {
    let words: Vec<Template> = split_command(text)?
        .iter()
        .map(|w| Template::parse(w.as_bytes()))
        .collect::<Result<_, _>>()?;
    Ok((!words.iter().all(Template::is_fixed)).then(|| words.into()))
}

impl RedisTarget {
    /// A target for the `redis://` URL `url`, resolved to `addr`, sending
    /// `command` (e.g. `PING`, `GET key`).
    pub fn new(
        url: &str,
        addr: SocketAddr,
        command: &str,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        Self::with_options(
            url,
            addr,
            command,
            &TargetOptions::default(),
            connect_timeout,
        )
    }

    /// As [`RedisTarget::new`], with the command line's TLS settings for a
    /// `rediss://` URL: the server's certificate accepted whatever it is
    /// with `--insecure` (or the URL's `#insecure`), checked against the
    /// system's roots and `--cacert` otherwise; `--cert`/`--key` presented;
    /// sessions resumed across connections unless `--tls-resume off`.
    pub fn with_options(
        url: &str,
        addr: SocketAddr,
        command: &str,
        options: &TargetOptions,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let bad = |e: &dyn std::fmt::Display| format!("invalid Redis URL \"{url}\": {e}");
        let mut info = url.into_connection_info().map_err(|e| bad(&e))?;
        if info.redis.password.is_none() {
            // The password may stay off the command line.
            info.redis.password = std::env::var("POOLBENCH_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty());
        }
        let tls = match &info.addr {
            ConnectionAddr::TcpTls { host, insecure, .. } => {
                Some(dial::tls_client(host, *insecure, options)?)
            }
            _ if options.cert.is_some() || options.key.is_some() => {
                return Err("--cert and --key need TLS: a rediss:// URL".to_string());
            }
            _ => None,
        };
        Ok(RedisTarget {
            info: Arc::new(info.redis),
            addr,
            tls,
            sources: Sources::default(),
            command: Arc::new(parse_command(command)?),
            varying: templates(command)?,
            seq: Arc::new(AtomicU64::new(0)),
            text: command.into(),
            connect_timeout,
        })
    }

    /// The command sent with each request, as given.
    pub fn command(&self) -> &str {
        &self.text
    }

    /// Connections bound to `sources` in turn (`--source`).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
    }

    /// The run's TLS handshakes so far (`rediss://`).
    pub fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        self.tls.as_ref().map(TlsClient::facts)
    }

    /// How holder-driven sessions start, when they can serve this target:
    /// plain TCP in RESP2 (TLS and RESP3 stay with the crate).
    pub(crate) fn wire_settings(&self) -> Option<SessionSetup> {
        if self.tls.is_some() || self.info.protocol != redis::ProtocolVersion::RESP2 {
            return None;
        }
        let r = &self.info;
        let auth = (r.username.as_deref(), r.password.as_deref());
        let settings = SessionSetup::new(self.addr, self.connect_timeout, auth, r.db);
        Some(settings.with_sources(self.sources.clone()))
    }

    /// The command as RESP: encoded once when fixed, else `None`
    /// ([`RedisTarget::render_request`] each time).
    pub(crate) fn fixed_request(&self) -> Option<bytes::Bytes> {
        if self.varying.is_some() {
            return None;
        }
        let words = split_command(&self.text).ok()?;
        let mut out = Vec::new();
        resp::encode_command(&words, &mut out);
        Some(out.into())
    }

    /// The next request of a varying command as RESP, into `out`.
    pub(crate) fn render_request(&self, out: &mut Vec<u8>) {
        out.clear();
        let seq = self.seq.fetch_add(1, Relaxed);
        let words: Vec<Vec<u8>> = match &self.varying {
            Some(words) => words.iter().map(|w| w.rendered(seq)).collect(),
            None => split_command(&self.text)
                .unwrap_or_default()
                .into_iter()
                .map(String::into_bytes)
                .collect(),
        };
        resp::encode_command(&words, out);
    }
}

impl Connector for RedisTarget {
    type Conn = RedisConn;
    type Error = RequestError;

    async fn connect(&self) -> Result<RedisConn, RequestError> {
        let conn = dial::connect(
            &self.info,
            (&self.sources, self.addr),
            self.tls.as_ref(),
            self.connect_timeout,
        )
        .await?;
        Ok(RedisConn {
            conn,
            broken: Arc::new(AtomicBool::new(false)),
        })
    }

    fn is_broken(&self, conn: &mut RedisConn) -> bool {
        conn.broken.load(Relaxed)
    }

    fn streams(&self, _conn: &RedisConn) -> usize {
        PIPELINE_DEPTH
    }

    fn share(&self, conn: &RedisConn) -> Option<RedisConn> {
        Some(conn.clone())
    }
}

impl Target for RedisTarget {
    async fn send(&self, conn: &mut RedisConn) -> Result<Reply, RequestError> {
        let rendered;
        let command = match &self.varying {
            None => &*self.command,
            Some(words) => {
                let seq = self.seq.fetch_add(1, Relaxed);
                let mut cmd = redis::cmd(&String::from_utf8_lossy(&words[0].rendered(seq)));
                for w in &words[1..] {
                    cmd.arg(w.rendered(seq));
                }
                rendered = cmd;
                &rendered
            }
        };
        match command.query_async::<Value>(&mut conn.conn).await {
            Ok(v) => Ok(Reply {
                status: 0,
                bytes: value_bytes(&v),
            }),
            Err(e) => {
                let err = classify(&e);
                if err.broken {
                    conn.broken.store(true, Relaxed);
                }
                Err(err)
            }
        }
    }

    fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        RedisTarget::tls_facts(self)
    }
}

/// Payload bytes of a reply (strings and their nesting).
fn value_bytes(v: &Value) -> u64 {
    match v {
        Value::BulkString(b) => b.len() as u64,
        Value::SimpleString(s) => s.len() as u64,
        Value::Array(items) | Value::Set(items) => items.iter().map(value_bytes).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_as_a_shell_does_and_vary_only_when_told() {
        let words = split_command(r#"SET "a key" 'the value' x"#).unwrap();
        assert_eq!(words, ["SET", "a key", "the value", "x"]);
        assert!(split_command("GET 'open")
            .unwrap_err()
            .contains("unbalanced"));
        assert!(split_command("  ").is_err());
        assert!(templates("GET fixed").unwrap().is_none());
        let t = templates("GET author:{random:1..3} {seq}")
            .unwrap()
            .unwrap();
        let key = String::from_utf8(t[1].rendered(0)).unwrap();
        assert!(
            ["author:1", "author:2", "author:3"].contains(&key.as_str()),
            "{key}"
        );
        assert_eq!(t[2].rendered(7), b"7");
    }
}
