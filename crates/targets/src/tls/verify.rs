//! How a server's certificate is checked: not at all (`--insecure`), or by
//! webpki against the trusted roots, a self-signed certificate given in
//! `--cacert` accepted as the server's own.
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::sync::Arc;

/// `--insecure`: any certificate is accepted; signatures are still checked,
/// so the handshake itself stays sound.
#[derive(Debug)]
pub(crate) struct AcceptAny(pub(crate) Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// webpki's checks, with two departures people expect of a client:
/// a self-signed certificate marked as a CA (what `openssl req -x509`
/// makes) that is byte-for-byte one of the `--cacert` certificates is
/// accepted as the server's own, its validity and name still checked; and,
/// with `any_name` (PostgreSQL's `verify-ca`), the name is not checked.
#[derive(Debug)]
pub(crate) struct Checked {
    pub(crate) webpki: Arc<WebPkiServerVerifier>,
    /// The certificates of `--cacert`, DER.
    pub(crate) pinned: Vec<CertificateDer<'static>>,
    pub(crate) any_name: bool,
}

impl Checked {
    /// A CA-flagged certificate that is one of `--cacert`'s, presented
    /// alone. webpki checks an end entity's validity period before its
    /// basic constraints, so `CaUsedAsEndEntity` comes only for a
    /// certificate valid now (the `expired_self_signed_ca` test holds it
    /// to that); the name is checked here.
    fn pinned_self_signed(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
    ) -> Result<ServerCertVerified, Error> {
        let pinned = intermediates.is_empty()
            && self
                .pinned
                .iter()
                .any(|c| c.as_ref() == end_entity.as_ref());
        if !pinned {
            return Err(Error::InvalidCertificate(CertificateError::Other(
                rustls::OtherError(Arc::new(CaAsServer)),
            )));
        }
        if !self.any_name {
            let parsed = ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_name(&parsed, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }
}

/// The server presented a CA certificate as its own and `--cacert` does
/// not hold that very certificate.
#[derive(Debug)]
pub(crate) struct CaAsServer;

impl std::fmt::Display for CaAsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CaUsedAsEndEntity")
    }
}

impl std::error::Error for CaAsServer {}

impl ServerCertVerifier for Checked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let checked = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match checked {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.any_name => Ok(ServerCertVerified::assertion()),
            Err(Error::InvalidCertificate(CertificateError::Other(e))) if ca_as_server(&e) => {
                self.pinned_self_signed(end_entity, intermediates, server_name)
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Is `e` webpki's `CaUsedAsEndEntity` (or ours, for a certificate not
/// in `--cacert`)?
pub(crate) fn ca_as_server(e: &rustls::OtherError) -> bool {
    e.0.downcast_ref::<CaAsServer>().is_some()
        || matches!(
            e.0.downcast_ref::<webpki::Error>(),
            Some(webpki::Error::CaUsedAsEndEntity)
        )
}

#[cfg(test)]
mod tests {
    use super::Checked;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::client::WebPkiServerVerifier;
    use rustls::{CertificateError, Error, RootCertStore};
    use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
    use std::sync::Arc;

    /// A self-signed certificate for localhost marked as a CA, as
    /// `openssl req -x509` makes it, valid `from`..`to` (years).
    fn self_signed_ca(from: i32, to: i32) -> CertificateDer<'static> {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.not_before = rcgen::date_time_ymd(from, 1, 1);
        params.not_after = rcgen::date_time_ymd(to, 1, 1);
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().clone()
    }

    fn check(cert: &CertificateDer<'static>, name: &str) -> Result<(), Error> {
        let mut roots = RootCertStore::empty();
        roots.add(cert.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .unwrap();
        let checked = Checked {
            webpki,
            pinned: vec![cert.clone()],
            any_name: false,
        };
        let name = ServerName::try_from(name.to_string()).unwrap();
        checked
            .verify_server_cert(cert, &[], &name, &[], UnixTime::now())
            .map(|_| ())
    }

    #[test]
    fn a_pinned_self_signed_ca_is_the_servers_own_with_its_name_and_validity_checked() {
        let good = self_signed_ca(2020, 2090);
        assert_eq!(check(&good, "localhost"), Ok(()));
        assert!(matches!(
            check(&good, "example.com"),
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
            ))
        ));
    }

    #[test]
    fn expired_self_signed_ca() {
        let old = self_signed_ca(2000, 2001);
        assert!(matches!(
            check(&old, "localhost"),
            Err(Error::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. }
            ))
        ));
    }
}
