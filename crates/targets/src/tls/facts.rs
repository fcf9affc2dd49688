//! The client's handshakes counted as each connection opens (never on the
//! request path): full or resumed, version, cipher suite, ALPN.
use poolbench_model::TlsFacts;
use rustls::{CommonState, HandshakeKind};
use std::sync::{Arc, Mutex};

/// One run's counters, shared by the clones of its target.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsCounters(Arc<Mutex<TlsFacts>>);

impl TlsCounters {
    /// Counters for a client that does (or does not) resume sessions.
    pub(crate) fn new(resumption: bool) -> TlsCounters {
        TlsCounters(Arc::new(Mutex::new(TlsFacts {
            resumption,
            ..TlsFacts::default()
        })))
    }

    /// Counts the handshake `conn` has just completed.
    pub(crate) fn record(&self, conn: &CommonState) {
        let Ok(mut f) = self.0.lock() else { return };
        match conn.handshake_kind() {
            Some(HandshakeKind::Resumed) => f.resumed += 1,
            Some(HandshakeKind::FullWithHelloRetryRequest) => {
                f.full += 1;
                f.hello_retry += 1;
            }
            _ => f.full += 1,
        }
        let version = conn
            .protocol_version()
            .map_or("unknown".to_string(), |v| format!("{v:?}"));
        *f.versions.entry(version).or_insert(0) += 1;
        let suite = conn
            .negotiated_cipher_suite()
            .map_or("unknown".to_string(), |s| format!("{:?}", s.suite()));
        *f.cipher_suites.entry(suite).or_insert(0) += 1;
        let alpn = conn.alpn_protocol().map_or("none".to_string(), |p| {
            String::from_utf8_lossy(p).into_owned()
        });
        *f.alpn.entry(alpn).or_insert(0) += 1;
    }

    /// The counts so far.
    pub(crate) fn snapshot(&self) -> TlsFacts {
        self.0.lock().map(|f| f.clone()).unwrap_or_default()
    }
}
