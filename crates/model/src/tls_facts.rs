//! What the client's TLS handshakes of one cell negotiated, counted when
//! each connection opened.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// TLS handshakes of one cell, as the client saw them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct TlsFacts {
    /// Whether the client offered to resume sessions (`--tls-resume`).
    pub resumption: bool,
    /// Handshakes that established a new session (a HelloRetryRequest
    /// round included).
    pub full: u64,
    /// Of `full`, those the server made retry with another key share.
    pub hello_retry: u64,
    /// Handshakes that resumed an earlier session (a TLS 1.3 ticket, a
    /// TLS 1.2 session ID or ticket): no certificate, no key exchange
    /// signature.
    pub resumed: u64,
    /// Handshakes by negotiated version (`TLSv1_3`, ...).
    pub versions: BTreeMap<String, u64>,
    /// Handshakes by negotiated cipher suite.
    pub cipher_suites: BTreeMap<String, u64>,
    /// Handshakes by ALPN protocol (`none` when none was agreed).
    pub alpn: BTreeMap<String, u64>,
}

impl TlsFacts {
    /// Every handshake counted.
    pub fn handshakes(&self) -> u64 {
        self.full + self.resumed
    }

    /// The handshakes counted since `earlier` (a snapshot of the same
    /// counters).
    pub fn since(&self, earlier: &TlsFacts) -> TlsFacts {
        let minus = |now: &BTreeMap<String, u64>, then: &BTreeMap<String, u64>| {
            now.iter()
                .map(|(k, n)| (k.clone(), n.saturating_sub(*then.get(k).unwrap_or(&0))))
                .filter(|(_, n)| *n > 0)
                .collect()
        };
        TlsFacts {
            resumption: self.resumption,
            full: self.full.saturating_sub(earlier.full),
            hello_retry: self.hello_retry.saturating_sub(earlier.hello_retry),
            resumed: self.resumed.saturating_sub(earlier.resumed),
            versions: minus(&self.versions, &earlier.versions),
            cipher_suites: minus(&self.cipher_suites, &earlier.cipher_suites),
            alpn: minus(&self.alpn, &earlier.alpn),
        }
    }

    /// The counts of two runs added up.
    pub fn combine(&mut self, other: &TlsFacts) {
        self.resumption |= other.resumption;
        self.full += other.full;
        self.hello_retry += other.hello_retry;
        self.resumed += other.resumed;
        for (mine, theirs) in [
            (&mut self.versions, &other.versions),
            (&mut self.cipher_suites, &other.cipher_suites),
            (&mut self.alpn, &other.alpn),
        ] {
            for (k, n) in theirs {
                *mine.entry(k.clone()).or_insert(0) += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TlsFacts;

    #[test]
    fn counts_since_a_snapshot_drop_what_did_not_change_and_add_up() {
        let mut then = TlsFacts {
            full: 2,
            ..TlsFacts::default()
        };
        then.versions.insert("TLSv1_3".into(), 2);
        let mut now = then.clone();
        now.resumed = 5;
        now.versions.insert("TLSv1_3".into(), 7);
        now.alpn.insert("h2".into(), 5);
        let d = now.since(&then);
        assert_eq!((d.full, d.resumed, d.handshakes()), (0, 5, 5));
        assert_eq!(d.versions.get("TLSv1_3"), Some(&5));
        let mut sum = d.clone();
        sum.combine(&d);
        assert_eq!((sum.resumed, sum.alpn.get("h2")), (10, Some(&10)));
    }
}
