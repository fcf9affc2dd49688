//! The client side of TLS (rustls): trust, ALPN, and the handshake.
use crate::{ErrorKind, RequestError, TargetError, TargetOptions, TargetSpec};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, CryptoProvider};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// What a target needs to open TLS connections to one server.
#[derive(Clone)]
pub(crate) struct TlsClient {
    connector: TlsConnector,
    server_name: ServerName<'static>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl TlsClient {
    /// A client for `spec`'s host offering `alpn`. Session resumption is off,
    /// so every connection pays a full handshake.
    pub(crate) fn new(
        spec: &TargetSpec,
        options: &TargetOptions,
        alpn: &[&[u8]],
    ) -> Result<TlsClient, TargetError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| TargetError::Setup(format!("TLS: {e}")))?;
        let mut config = if options.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots(options)?)
                .with_no_client_auth()
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        config.resumption = Resumption::disabled();
        let host = spec
            .authority
            .rsplit_once(':')
            .map_or(spec.authority.as_str(), |(host, _)| host)
            .trim_start_matches('[')
            .trim_end_matches(']');
        let server_name = ServerName::try_from(host.to_string())
            .map_err(|e| TargetError::Setup(format!("TLS: invalid server name {host:?}: {e}")))?;
        Ok(TlsClient {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }

    /// The TLS handshake over `tcp`, within `timeout`.
    pub(crate) async fn handshake(
        &self,
        tcp: TcpStream,
        timeout: Duration,
    ) -> Result<TlsStream<TcpStream>, RequestError> {
        let handshake = self.connector.connect(self.server_name.clone(), tcp);
        match tokio::time::timeout(timeout, handshake).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(e)) => Err(classify(&e)),
            Err(_) => Err(RequestError::broken(
                ErrorKind::Timeout,
                "TLS handshake timed out",
            )),
        }
    }
}

/// The negotiated ALPN protocol of a TLS connection.
pub(crate) fn alpn(stream: &TlsStream<TcpStream>) -> Option<&[u8]> {
    stream.get_ref().1.alpn_protocol()
}

fn classify(e: &std::io::Error) -> RequestError {
    classify_with(e, "--insecure accepts it, --cacert FILE trusts it")
}

/// A failed handshake; `hint` says how to accept an untrusted certificate.
fn classify_with(e: &std::io::Error, hint: &str) -> RequestError {
    let tls = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(why)) => RequestError::broken(
            ErrorKind::Protocol,
            format!("TLS: server certificate not trusted ({why:?}); {hint}"),
        ),
        Some(other) => RequestError::broken(ErrorKind::Protocol, format!("TLS: {other}")),
        None => RequestError::broken(ErrorKind::of_io(e), format!("TLS handshake: {e}")),
    }
}

/// The system's trusted roots plus `--cacert`.
fn roots(options: &TargetOptions) -> Result<RootCertStore, TargetError> {
    let mut roots = RootCertStore::empty();
    // Unreadable system certificates are skipped: --cacert may be all we need.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &options.cacert {
        let bad = |why: String| TargetError::Setup(format!("--cacert {}: {why}", path.display()));
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| bad(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad("no PEM certificate in it".to_string()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
        }
    }
    Ok(roots)
}

/// `--insecure`: any certificate is accepted; signatures are still checked,
/// so the handshake itself stays sound.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// How a server's certificate is checked (PostgreSQL's `sslmode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verify {
    /// Not at all (`require` without a root certificate).
    Nothing,
    /// The chain up to a trusted root, whatever name it is for
    /// (`verify-ca`).
    Chain,
    /// The chain and the server's name (`verify-full`).
    Full,
}

/// A TLS connector checking certificates as `verify` says, trusting the
/// system's roots and the PEM certificates in `cacert`.
pub(crate) fn connector(
    verify: Verify,
    cacert: Option<&std::path::Path>,
) -> Result<TlsConnector, TargetError> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| TargetError::Setup(format!("TLS: {e}")))?;
    let options = TargetOptions {
        cacert: cacert.map(std::path::Path::to_path_buf),
        ..TargetOptions::default()
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Nothing => Arc::new(AcceptAny(provider)),
        Verify::Chain | Verify::Full => {
            let roots = Arc::new(roots(&options)?);
            let webpki =
                rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| TargetError::Setup(format!("TLS: {e}")))?;
            match verify {
                Verify::Chain => Arc::new(AnyName(webpki)),
                _ => webpki,
            }
        }
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.resumption = Resumption::disabled();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// A TLS handshake over `io` for `host` (a name or an address); `hint`
/// tells how to accept a certificate found untrusted.
pub(crate) async fn handshake_with<I>(
    connector: &TlsConnector,
    host: &str,
    io: I,
    hint: &str,
) -> Result<tokio_rustls::client::TlsStream<I>, RequestError>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        RequestError::broken(
            ErrorKind::Protocol,
            format!("TLS: invalid server name {host:?}: {e}"),
        )
    })?;
    connector
        .connect(name, io)
        .await
        .map_err(|e| classify_with(&e, hint))
}

/// Checks the chain, accepting a certificate for any name.
#[derive(Debug)]
struct AnyName(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
