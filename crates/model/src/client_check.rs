//! What `poolbench serve --check-client` saw of a client from the server's
//! side ([`ClientWatch`], written by the server), and the verdict
//! ([`ClientCheck`]: the watch, the findings, the user's expectations).
use crate::findings::Id;
use serde::{Deserialize, Serialize};

/// How connections ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndedBy {
    /// The client closed it (or the connection broke on its side).
    pub client: u64,
    /// The server closed it after its keep-alive idle timeout.
    pub server_idle: u64,
    /// The server closed it after its requests-per-connection limit.
    pub server_limit: u64,
    /// The server stopped with it open.
    pub server_stop: u64,
    /// Reset, or an error mid-request.
    pub reset: u64,
}

/// What the server saw of its clients, from the first request to the end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientWatch {
    /// Seconds from the first connection to the end of the watch.
    pub watched_s: f64,
    /// Seconds during which at least one request was in flight.
    pub busy_s: f64,
    /// Requests received (the server's own endpoints left out).
    pub requests: u64,
    /// Connections accepted.
    pub connections_opened: u64,
    /// Most connections open at once that carried a request (a client's
    /// request to the server's own endpoints is not its pool).
    pub connections_peak: u64,
    /// Mean of those connections open over the watch.
    pub connections_mean: f64,
    /// Most requests in flight at once (received, not yet answered).
    pub in_flight_peak: u64,
    /// Mean requests in flight while any was.
    pub in_flight_mean: f64,
    /// The count of requests in flight held most of the busy time, and
    /// the share of the busy time it was held (sampled every 5 ms).
    pub in_flight_mode: u64,
    pub in_flight_mode_share: f64,
    /// The share of the busy time at the peak.
    pub in_flight_peak_share: f64,
    /// Mean and longest life of the connections that ended, seconds.
    pub connection_life_mean_s: f64,
    pub connection_life_max_s: f64,
    pub ended_by: EndedBy,
    /// Connections that spoke HTTP/1.1, and HTTP/2 (gRPC included).
    pub http1_connections: u64,
    pub h2_connections: u64,
    /// Most HTTP/2 connections open at once.
    pub h2_connections_peak: u64,
    /// Most streams open at once on one HTTP/2 connection.
    pub streams_peak: u64,
    /// The streams the server allows per HTTP/2 connection.
    pub streams_allowed: Option<u64>,
    /// Share of the busy time an HTTP/2 connection had every stream the
    /// server allows open.
    pub streams_at_limit_share: f64,
    /// gRPC calls among the requests.
    pub grpc_requests: u64,
    pub tls_handshakes: u64,
    pub tls_resumed: u64,
    /// The server's keep-alive idle timeout, seconds (`None`: off).
    pub keepalive_timeout_s: Option<f64>,
    /// The longest a connection sat idle between two of its requests.
    pub idle_gap_max_s: f64,
    /// Requests that arrived after their connection had been idle for
    /// 90% of the keep-alive timeout or more.
    pub late_reuses: u64,
    /// Requests received after the first connection the server closed
    /// for idleness: the client came back.
    pub requests_after_idle_close: u64,
}

/// One finding about the client: what it means, the numbers that show
/// it, and the setting that changes it in the client named (or in words).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientFinding {
    pub id: Id,
    pub title: String,
    pub evidence: Vec<String>,
    pub setting: Option<String>,
}

/// One bound the user set with `--expect`, against what was seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExpectationResult {
    /// As written: `pool=25`.
    pub expect: String,
    pub actual: f64,
    pub met: bool,
}

/// The verdict on a client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientCheck {
    /// `client-gone`, `interrupted`, `timeout`, or `running` (a report
    /// while the client still runs).
    pub ended: String,
    /// The client library named with `--client`.
    pub client: Option<String>,
    /// Where the server listened: `http`, `tls`, `grpc` and the address.
    pub listeners: Vec<(String, String)>,
    #[serde(flatten)]
    pub watch: ClientWatch,
    pub requests_per_connection: f64,
    pub findings: Vec<ClientFinding>,
    pub expectations: Vec<ExpectationResult>,
}

impl ClientCheck {
    /// Whether every expectation held.
    pub fn met(&self) -> bool {
        self.expectations.iter().all(|e| e.met)
    }
}

/// What an `--expect` bound measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectKey {
    /// Most connections open at once (`pool`, `connections`).
    Pool,
    InFlight,
    NewConnections,
    Requests,
    RequestsPerConnection,
    Streams,
}

impl ExpectKey {
    const NAMES: [(&'static str, ExpectKey); 7] = [
        ("pool", ExpectKey::Pool),
        ("connections", ExpectKey::Pool),
        ("in-flight", ExpectKey::InFlight),
        ("new-connections", ExpectKey::NewConnections),
        ("requests", ExpectKey::Requests),
        ("requests-per-connection", ExpectKey::RequestsPerConnection),
        ("streams", ExpectKey::Streams),
    ];

    /// The value seen in `c`.
    pub fn of(self, c: &ClientCheck) -> f64 {
        let w = &c.watch;
        match self {
            ExpectKey::Pool => w.connections_peak as f64,
            ExpectKey::InFlight => w.in_flight_peak as f64,
            ExpectKey::NewConnections => w.connections_opened as f64,
            ExpectKey::Requests => w.requests as f64,
            ExpectKey::RequestsPerConnection => c.requests_per_connection,
            ExpectKey::Streams => w.streams_peak as f64,
        }
    }
}

/// One `--expect` bound: `key OP value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    pub text: String,
    pub key: ExpectKey,
    pub op: &'static str,
    pub value: f64,
}

impl Expect {
    /// Whether `actual` keeps the bound.
    pub fn holds(&self, actual: f64) -> bool {
        match self.op {
            ">=" => actual >= self.value,
            "<=" => actual <= self.value,
            ">" => actual > self.value,
            "<" => actual < self.value,
            _ => (actual - self.value).abs() < 1e-9,
        }
    }
}

/// `pool=25,in-flight>=100`: comma-separated bounds.
pub fn parse_expect(s: &str) -> Result<Vec<Expect>, String> {
    let keys = || {
        ExpectKey::NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!("empty bound in \"{s}\""));
        }
        let at = part
            .find(['=', '<', '>'])
            .ok_or_else(|| format!("\"{part}\": expected KEY=N, KEY>=N, KEY<=N, KEY>N or KEY<N"))?;
        let (name, rest) = part.split_at(at);
        let op = ["<=", ">=", "=", "<", ">"]
            .into_iter()
            .find(|op| rest.starts_with(op))
            .expect("starts with one of = < >");
        let number = &rest[op.len()..];
        let key = ExpectKey::NAMES
            .iter()
            .find(|(n, _)| *n == name.trim())
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                format!(
                    "\"{part}\": unknown key \"{}\" (one of: {})",
                    name.trim(),
                    keys()
                )
            })?;
        let value: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("\"{part}\": \"{number}\" is not a number"))?;
        out.push(Expect {
            text: part.to_string(),
            key,
            op,
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_and_bad_ones_say_why() {
        let e = parse_expect("pool=25, in-flight>=100,requests-per-connection>10").unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(
            (e[0].key, e[0].op, e[0].value),
            (ExpectKey::Pool, "=", 25.0)
        );
        assert_eq!((e[1].key, e[1].op), (ExpectKey::InFlight, ">="));
        assert!(e[1].holds(100.0) && !e[1].holds(99.0));
        assert!(e[2].holds(10.5) && !e[2].holds(10.0));
        for bad in [
            "pool==",
            "pool",
            "pools=3",
            "pool=-1",
            "pool=1,",
            "in-flight>=x",
        ] {
            let err = parse_expect(bad).unwrap_err();
            assert!(!err.contains('\n'), "{err}");
        }
        assert!(parse_expect("pools=3").unwrap_err().contains("in-flight"));
    }
}
