//! The TLS listener's rustls configuration: a certificate from files, or a
//! self-signed one generated at start.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::crypto::ring::default_provider;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::config::ServerConfig;

/// ALPN protocols offered, most preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// The server side of TLS, and the certificate it presents (PEM).
pub(crate) struct TlsSetup {
    pub(crate) config: Arc<rustls::ServerConfig>,
    pub(crate) certificate_pem: String,
}

/// Builds the rustls server configuration for `config`: its `tls_cert` and
/// `tls_key` files, or a fresh self-signed certificate for `localhost` and
/// `127.0.0.1`. Errors name the file or step that failed.
pub(crate) fn setup(config: &ServerConfig) -> io::Result<TlsSetup> {
    let (chain, key, certificate_pem) = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => from_files(cert, key)?,
        _ => self_signed()?,
    };
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(format!("TLS certificate and key do not fit: {e}")))?;
    let mut server = server;
    server.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    // Resumption as servers deploy it: stateless tickets (TLS 1.3 and 1.2)
    // beside the default in-memory session-ID cache.
    server.ticketer = rustls::crypto::ring::Ticketer::new().map_err(io::Error::other)?;
    server.session_storage = rustls::server::ServerSessionMemoryCache::new(4096);
    Ok(TlsSetup {
        config: Arc::new(server),
        certificate_pem,
    })
}

type Material = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, String);

fn from_files(cert: &Path, key: &Path) -> io::Result<Material> {
    let pem = std::fs::read_to_string(cert)
        .map_err(|e| invalid(format!("cannot read certificate {}: {e}", cert.display())))?;
    let chain = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("bad certificate {}: {e}", cert.display())))?;
    if chain.is_empty() {
        return Err(invalid(format!(
            "no certificate in {} (expected PEM)",
            cert.display()
        )));
    }
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| invalid(format!("bad private key {}: {e}", key.display())))?;
    Ok((chain, key_der, pem))
}

fn self_signed() -> io::Result<Material> {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| io::Error::other(format!("cannot generate a certificate: {e}")))?;
    let pem = generated.cert.pem();
    let key = PrivatePkcs8KeyDer::from(generated.signing_key.serialize_der());
    Ok((vec![generated.cert.der().clone()], key.into(), pem))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
