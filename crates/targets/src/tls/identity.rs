//! Certificates from files: the trusted roots (`--cacert`) and the client's
//! own certificate and key (`--cert`, `--key`), checked before any load.
use crate::TargetError;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;

/// The PEM certificates in `path`; `flag` names where the path came from.
pub(crate) fn certificates(
    path: &Path,
    flag: &str,
) -> Result<Vec<CertificateDer<'static>>, TargetError> {
    let bad = |why: String| TargetError::Setup(format!("{flag} {}: {why}", path.display()));
    let pem = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificate in it".to_string()));
    }
    Ok(certs)
}

/// The system's trusted roots plus `extra` (the certificates of `--cacert`).
pub(crate) fn roots(
    extra: &[CertificateDer<'static>],
    flag: &str,
) -> Result<RootCertStore, TargetError> {
    let mut roots = RootCertStore::empty();
    // Unreadable system certificates are skipped: --cacert may be all we need.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    for cert in extra {
        roots
            .add(cert.clone())
            .map_err(|e| TargetError::Setup(format!("{flag}: {e}")))?;
    }
    Ok(roots)
}

/// The client certificate chain in `cert` with the private key in `key`:
/// both readable, PEM, and the key the certificate's.
pub(crate) fn client_identity(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<Arc<CertifiedKey>, TargetError> {
    let chain = certificates(cert, "--cert")?;
    let bad_key = |why: String| TargetError::Setup(format!("--key {}: {why}", key.display()));
    let pem = std::fs::read(key).map_err(|e| bad_key(e.to_string()))?;
    let der = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| bad_key(format!("no PEM private key in it ({e})")))?;
    let certified = CertifiedKey::from_der(chain, der, provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => TargetError::Setup(format!(
            "--key {} is not the key of --cert {}",
            key.display(),
            cert.display()
        )),
        e => bad_key(e.to_string()),
    })?;
    Ok(Arc::new(certified))
}

/// `--cert` and `--key` come together.
pub(crate) fn pair<'a>(
    cert: Option<&'a Path>,
    key: Option<&'a Path>,
) -> Result<Option<(&'a Path, &'a Path)>, TargetError> {
    match (cert, key) {
        (Some(c), Some(k)) => Ok(Some((c, k))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(TargetError::Setup(
            "--cert needs --key FILE (the certificate's private key)".into(),
        )),
        (None, Some(_)) => Err(TargetError::Setup(
            "--key needs --cert FILE (the client certificate)".into(),
        )),
    }
}

/// `--cert` and `--key` for a target whose client library reads the files
/// itself (Redis, MySQL): checked here as for every TLS target (both
/// given, readable, the key the certificate's), before any load.
pub(crate) fn checked_client_files(
    options: &crate::TargetOptions,
) -> Result<Option<(&Path, &Path)>, String> {
    let pair = pair(options.cert.as_deref(), options.key.as_deref()).map_err(|e| e.to_string())?;
    if let Some((cert, key)) = pair {
        let provider = rustls::crypto::ring::default_provider();
        client_identity(cert, key, &provider).map_err(|e| e.to_string())?;
    }
    Ok(pair)
}
