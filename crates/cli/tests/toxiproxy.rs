//! Shopify's toxiproxy, driven through its HTTP API
//! (POOLBENCH_TOXIPROXY_URL, started by scripts/services.sh): a proxy of a
//! test's own in front of a target, and a fault (a "toxic") on it.
use crate::services::toxiproxy_url;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One request to toxiproxy's API: (status, body).
fn api(method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let base = toxiproxy_url();
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(host).expect("toxiproxy answers");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

/// A proxy of the test's own in front of `upstream`, removed when dropped.
pub(crate) struct Proxy {
    pub(crate) name: String,
    pub(crate) listen: String,
}

impl Proxy {
    pub(crate) fn new(name: &str, upstream: &str) -> Proxy {
        let name = format!("{name}-{}", std::process::id());
        let (code, body) = api(
            "POST",
            "/proxies",
            Some(
                &json!({"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}),
            ),
        );
        assert_eq!(code, 201, "toxiproxy refused the proxy: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let listen = v["listen"].as_str().unwrap().to_string();
        assert!(!listen.ends_with(":0"), "{body}");
        Proxy { name, listen }
    }

    pub(crate) fn add(&self, toxic: &str, attributes: Value) {
        let (code, body) = api(
            "POST",
            &format!("/proxies/{}/toxics", self.name),
            Some(
                &json!({"name": "fault", "type": toxic, "stream": "downstream", "toxicity": 1.0, "attributes": attributes}),
            ),
        );
        assert_eq!(code, 200, "toxiproxy refused the {toxic} toxic: {body}");
    }

    pub(crate) fn remove(&self) {
        let (code, body) = api(
            "DELETE",
            &format!("/proxies/{}/toxics/fault", self.name),
            None,
        );
        assert_eq!(code, 204, "{body}");
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = api("DELETE", &format!("/proxies/{}", self.name), None);
    }
}
