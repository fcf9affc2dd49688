//! A failed handshake in one line: its real cause, and the setting that
//! fixes it, never the one already given.
use crate::{ErrorKind, RequestError};
use rustls::{AlertDescription, CertificateError, Error};
use rustls_pki_types::ServerName;
use std::path::Path;

/// The settings behind a TLS client, spelled as the user gives them.
#[derive(Debug, Clone)]
pub(crate) struct Explain {
    /// `--cacert FILE` (or `sslrootcert=FILE`) as given, if it was.
    pub(crate) cacert: Option<String>,
    /// The setting that trusts a certificate (`--cacert`).
    pub(crate) trust_flag: &'static str,
    /// The setting that skips the certificate check.
    pub(crate) skip_flag: &'static str,
    /// The setting that skips the name check, where there is one.
    pub(crate) any_name_flag: Option<&'static str>,
    /// The settings giving a client certificate.
    pub(crate) cert_flags: &'static str,
    pub(crate) client_cert: bool,
}

impl Explain {
    /// The command line's flags (https, grpcs).
    pub(crate) fn flags(cacert: Option<&Path>, client_cert: bool) -> Explain {
        Explain {
            cacert: cacert.map(|p| format!("--cacert {}", p.display())),
            trust_flag: "--cacert FILE",
            skip_flag: "--insecure",
            any_name_flag: None,
            cert_flags: "--cert FILE --key FILE",
            client_cert,
        }
    }

    /// A PostgreSQL URL's settings (libpq's spelling).
    pub(crate) fn postgres(rootcert: Option<&Path>, client_cert: bool) -> Explain {
        Explain {
            cacert: rootcert.map(|p| format!("sslrootcert={}", p.display())),
            trust_flag: "sslrootcert=FILE (or --cacert FILE)",
            skip_flag: "sslmode=require",
            any_name_flag: Some("sslmode=verify-ca"),
            cert_flags: "sslcert=FILE sslkey=FILE (or --cert FILE --key FILE)",
            client_cert,
        }
    }

    /// The message of a failed handshake with `name`.
    pub(crate) fn error(&self, e: &std::io::Error, name: &ServerName<'_>) -> RequestError {
        let tls = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>());
        let message = match tls {
            Some(Error::InvalidCertificate(why)) => self.certificate(why, name),
            Some(Error::AlertReceived(alert)) => self.alert(*alert),
            Some(other) => format!("TLS: {other}"),
            None => {
                return RequestError::broken(ErrorKind::of_io(e), format!("TLS handshake: {e}"))
            }
        };
        RequestError::broken(ErrorKind::Protocol, message)
    }

    fn certificate(&self, why: &CertificateError, name: &ServerName<'_>) -> String {
        let skip = self.skip_flag;
        let host = name.to_str();
        match why {
            CertificateError::UnknownIssuer => match &self.cacert {
                Some(given) => format!(
                    "TLS: the server's certificate is signed by none of the certificates \
                     in {given} (nor the system's roots): give the certificate of the CA \
                     that signed it, or the server's own, in {}; {skip} skips the check",
                    self.trust_flag
                ),
                None => format!(
                    "TLS: the server's certificate is signed by a CA this machine does \
                     not trust: {} with that CA's certificate (or the server's own) \
                     trusts it; {skip} skips the check",
                    self.trust_flag
                ),
            },
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                let instead = self
                    .any_name_flag
                    .map_or(String::new(), |f| format!("; {f} checks all but the name"));
                format!(
                    "TLS: the server's certificate is not for {host:?} ({why}): connect by \
                     a name it holds{instead}; {skip} skips the check"
                )
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => format!(
                "TLS: the server's certificate is outside its validity period ({why}): \
                 renew it (or check this machine's clock); {skip} skips the check"
            ),
            CertificateError::Other(e) if super::verify::ca_as_server(e) => {
                let given = self
                    .cacert
                    .as_ref()
                    .map_or(String::new(), |g| format!(", and it is not in {g}"));
                format!(
                    "TLS: the server presents a CA certificate as its own (a self-signed \
                     one, as `openssl req -x509` makes){given}: {} with that very \
                     certificate trusts it; {skip} skips the check",
                    self.trust_flag
                )
            }
            other => format!(
                "TLS: the server's certificate is refused ({other}); {skip} skips the check"
            ),
        }
    }

    fn alert(&self, alert: AlertDescription) -> String {
        use AlertDescription as A;
        match (alert, self.client_cert) {
            (A::CertificateRequired | A::HandshakeFailure, false) => format!(
                "TLS: the server requires a client certificate (alert {alert:?}): {}",
                self.cert_flags
            ),
            (
                A::BadCertificate
                | A::UnknownCA
                | A::CertificateUnknown
                | A::CertificateRevoked
                | A::CertificateExpired
                | A::AccessDenied
                | A::UnsupportedCertificate,
                true,
            ) => format!(
                "TLS: the server refused the client certificate (alert {alert:?}): it must \
                 be signed by a CA the server trusts and valid now; change {}",
                self.cert_flags
            ),
            _ => format!("TLS: the server ended the handshake (alert {alert:?})"),
        }
    }
}
