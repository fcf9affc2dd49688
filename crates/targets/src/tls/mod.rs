//! The client side of TLS (rustls): trust, client certificates, session
//! resumption, ALPN, and the handshake, counted as it completes.
mod explain;
mod facts;
mod identity;
pub(crate) use identity::checked_client_files;
mod verify;

use crate::{ErrorKind, RequestError, TargetError, TargetOptions, TargetSpec};
pub(crate) use explain::Explain;
pub(crate) use facts::TlsCounters;
use poolbench_model::{TlsFacts, TlsResume};
use rustls::client::{ResolvesClientCert, Resumption};
use rustls::crypto::ring;
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, SignatureScheme};
use rustls_pki_types::ServerName;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// How a server's certificate is checked (PostgreSQL's `sslmode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verify {
    /// Not at all (`--insecure`, `require` without a root certificate).
    Nothing,
    /// The chain up to a trusted root, whatever name it is for
    /// (`verify-ca`).
    Chain,
    /// The chain and the server's name (`verify-full`, and https).
    Full,
}

/// What one run's TLS client is made of.
pub(crate) struct TlsOptions<'a> {
    pub(crate) verify: Verify,
    /// Trusted certificates beside the system's (`--cacert`).
    pub(crate) cacert: Option<&'a Path>,
    pub(crate) cert: Option<&'a Path>,
    pub(crate) key: Option<&'a Path>,
    pub(crate) resume: bool,
    pub(crate) alpn: &'a [&'a [u8]],
    /// The flags that change each setting, for error messages.
    pub(crate) explain: Explain,
}

impl<'a> TlsOptions<'a> {
    /// Settings from the command line's options (https, grpcs).
    pub(crate) fn of(options: &'a TargetOptions, alpn: &'a [&'a [u8]]) -> TlsOptions<'a> {
        TlsOptions {
            verify: match options.insecure {
                true => Verify::Nothing,
                false => Verify::Full,
            },
            cacert: options.cacert.as_deref(),
            cert: options.cert.as_deref(),
            key: options.key.as_deref(),
            resume: options.tls_resume == TlsResume::On,
            alpn,
            explain: Explain::flags(options.cacert.as_deref(), options.cert.is_some()),
        }
    }
}

/// A run's TLS client: one configuration, one session store, one set of
/// counters, shared by every connection (clones share them too).
#[derive(Clone)]
pub(crate) struct TlsClient {
    connector: TlsConnector,
    counters: TlsCounters,
    explain: Arc<Explain>,
    /// The server asked for a client certificate at least once.
    asked_for_cert: Arc<AtomicBool>,
    /// The server's name, for a client of one URL.
    name: Option<ServerName<'static>>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient").finish_non_exhaustive()
    }
}

impl TlsClient {
    /// A client as `settings` say; unreadable or mismatched files are
    /// errors here, before any connection.
    pub(crate) fn new(settings: TlsOptions<'_>) -> Result<TlsClient, TargetError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| TargetError::Setup(format!("TLS: {e}")))?;
        let pinned = match settings.cacert {
            Some(path) => identity::certificates(path, "--cacert")?,
            None => Vec::new(),
        };
        let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> = match settings.verify {
            Verify::Nothing => Arc::new(verify::AcceptAny(Arc::clone(&provider))),
            Verify::Chain | Verify::Full => {
                let roots = Arc::new(identity::roots(&pinned, "--cacert")?);
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    roots,
                    Arc::clone(&provider),
                )
                .build()
                .map_err(|e| TargetError::Setup(format!("TLS: {e}")))?;
                Arc::new(verify::Checked {
                    webpki,
                    pinned,
                    any_name: settings.verify == Verify::Chain,
                })
            }
        };
        let own = match identity::pair(settings.cert, settings.key)? {
            Some((cert, key)) => Some(identity::client_identity(cert, key, &provider)?),
            None => None,
        };
        let asked_for_cert = Arc::new(AtomicBool::new(false));
        let resolver = Arc::new(ClientCert {
            own,
            asked: Arc::clone(&asked_for_cert),
        });
        let mut config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_client_cert_resolver(resolver);
        config.alpn_protocols = settings.alpn.iter().map(|p| p.to_vec()).collect();
        config.resumption = match settings.resume {
            // TLS 1.3 tickets, TLS 1.2 session IDs and tickets.
            true => Resumption::in_memory_sessions(4096),
            false => Resumption::disabled(),
        };
        Ok(TlsClient {
            connector: TlsConnector::from(Arc::new(config)),
            counters: TlsCounters::new(settings.resume),
            explain: Arc::new(settings.explain),
            asked_for_cert,
            name: None,
        })
    }

    /// A client for `spec`'s host offering `alpn`, as the command line's
    /// options say (https, grpcs).
    pub(crate) fn for_url(
        spec: &TargetSpec,
        options: &TargetOptions,
        alpn: &[&[u8]],
    ) -> Result<TlsClient, TargetError> {
        let mut client = TlsClient::new(TlsOptions::of(options, alpn))?;
        client.name = Some(server_name(spec)?);
        Ok(client)
    }

    /// This client, for the server named `name`.
    pub(crate) fn named(mut self, name: ServerName<'static>) -> TlsClient {
        self.name = Some(name);
        self
    }

    /// The handshake with the URL's host over `tcp` (see [`TlsClient::for_url`]).
    pub(crate) async fn handshake_tcp(
        &self,
        tcp: TcpStream,
        timeout: Duration,
    ) -> Result<TlsStream<TcpStream>, RequestError> {
        let Some(name) = &self.name else {
            return Err(RequestError::protocol("TLS: no server name".to_string()));
        };
        self.handshake(name, tcp, timeout).await
    }

    /// The TLS handshake over `io` for `name`, within `timeout`, counted.
    pub(crate) async fn handshake<I>(
        &self,
        name: &ServerName<'static>,
        io: I,
        timeout: Duration,
    ) -> Result<TlsStream<I>, RequestError>
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let handshake = self.connector.connect(name.clone(), io);
        match tokio::time::timeout(timeout, handshake).await {
            Ok(Ok(stream)) => {
                self.counters.record(stream.get_ref().1);
                Ok(stream)
            }
            Ok(Err(e)) => Err(self.explain.error(&e, name)),
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                "TLS handshake timed out",
            )),
        }
    }

    /// The handshakes so far.
    pub(crate) fn facts(&self) -> TlsFacts {
        self.counters.snapshot()
    }

    /// Did the server ask for a client certificate when none was given?
    pub(crate) fn wanted_a_client_cert(&self) -> bool {
        self.asked_for_cert.load(Ordering::Relaxed) && !self.explain.client_cert
    }
}

/// A PostgreSQL client's TLS: `verify` as `sslmode` says, trusting
/// `rootcert`, presenting `cert` and `key` (`sslcert`, `sslkey`).
pub(crate) fn postgres_client(
    verify: Verify,
    rootcert: Option<&Path>,
    cert: Option<&Path>,
    key: Option<&Path>,
    resume: bool,
) -> Result<TlsClient, TargetError> {
    TlsClient::new(TlsOptions {
        verify,
        cacert: rootcert,
        cert,
        key,
        resume,
        alpn: &[],
        explain: Explain::postgres(rootcert, cert.is_some()),
    })
}

/// The server name of `spec`'s host.
pub(crate) fn server_name(spec: &TargetSpec) -> Result<ServerName<'static>, TargetError> {
    let host = spec
        .authority
        .rsplit_once(':')
        .map_or(spec.authority.as_str(), |(host, _)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    name_of(host).map_err(|e| TargetError::Setup(format!("TLS: {e}")))
}

/// `host` (a name or an address) as a TLS server name.
pub(crate) fn name_of(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string()).map_err(|e| format!("invalid server name {host:?}: {e}"))
}

/// The negotiated ALPN protocol of a TLS connection.
pub(crate) fn alpn(stream: &TlsStream<TcpStream>) -> Option<&[u8]> {
    stream.get_ref().1.alpn_protocol()
}

/// Presents the client certificate when there is one, and notes that the
/// server asked.
#[derive(Debug)]
struct ClientCert {
    own: Option<Arc<CertifiedKey>>,
    asked: Arc<AtomicBool>,
}

impl ResolvesClientCert for ClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        self.own.clone()
    }

    fn has_certs(&self) -> bool {
        self.own.is_some()
    }
}
