//! The TLS listener: a certificate from files, ALPN, handshakes counted,
//! and the certificate and key checked before serving.

use std::sync::Arc;

use poolbench_server::{EmbeddedServer, ServerConfig};
use rustls::crypto::ring::default_provider;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// A certificate for `localhost` and its key, written as PEM files that are
/// removed on drop.
struct PemFiles {
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
    cert_pem: String,
}

impl PemFiles {
    fn new(name: &str) -> PemFiles {
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let dir = std::env::temp_dir();
        let id = std::process::id();
        let cert = dir.join(format!("poolbench-{name}-{id}.crt"));
        let key = dir.join(format!("poolbench-{name}-{id}.key"));
        let cert_pem = generated.cert.pem();
        std::fs::write(&cert, &cert_pem).unwrap();
        std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
        PemFiles {
            cert,
            key,
            cert_pem,
        }
    }
}

impl Drop for PemFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.cert);
        let _ = std::fs::remove_file(&self.key);
    }
}

fn tls_config(files: Option<&PemFiles>) -> ServerConfig {
    let any = "127.0.0.1:0".parse().unwrap();
    ServerConfig {
        listen: any,
        tls_listen: Some(any),
        tls_cert: files.map(|f| f.cert.clone()),
        tls_key: files.map(|f| f.key.clone()),
        ..ServerConfig::default()
    }
}

/// Over TLS trusting `cert_pem`, offering `alpn`: one HTTP/1.1 GET, or the
/// start of an HTTP/2 connection. Returns the negotiated protocol and the
/// HTTP/1.1 answer.
async fn get(server: &EmbeddedServer, cert_pem: &str, alpn: &[u8]) -> (Vec<u8>, String) {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap())
        .unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = TcpStream::connect(server.addrs().tls.unwrap())
        .await
        .unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    let negotiated = tls.get_ref().1.alpn_protocol().unwrap_or_default().to_vec();
    if negotiated != b"h2" {
        tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut text = String::new();
        tls.read_to_string(&mut text).await.unwrap();
        return (negotiated, text);
    }
    // HTTP/2: the connection preface and an empty SETTINGS frame; the
    // server's own SETTINGS frame answers (so its handshake is counted).
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    let mut frame_header = [0u8; 9];
    tls.read_exact(&mut frame_header).await.unwrap();
    assert_eq!(
        frame_header[3], 4,
        "SETTINGS frame expected: {frame_header:?}"
    );
    (negotiated, String::new())
}

#[tokio::test]
async fn certificate_from_files_and_alpn() {
    let files = PemFiles::new("tls-files");
    let server = EmbeddedServer::start(tls_config(Some(&files)), 1).unwrap();
    assert_eq!(server.certificate_pem(), Some(files.cert_pem.as_str()));
    let (alpn, text) = get(&server, &files.cert_pem, b"http/1.1").await;
    assert_eq!(alpn, b"http/1.1");
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(text.ends_with("Hello, World!"), "{text}");
    let (alpn, _) = get(&server, &files.cert_pem, b"h2").await;
    assert_eq!(alpn, b"h2");
    let stats = server.stats().snapshot();
    assert_eq!(stats.tls_handshakes, 2);
    assert_eq!(stats.requests, 1);
}

#[tokio::test]
async fn self_signed_certificate_is_generated_at_start() {
    let server = EmbeddedServer::start(tls_config(None), 1).unwrap();
    let pem = server
        .certificate_pem()
        .expect("a generated certificate")
        .to_string();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    let (_, text) = get(&server, &pem, b"http/1.1").await;
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
}

#[test]
fn bad_certificate_settings_are_refused_before_serving() {
    let files = PemFiles::new("tls-bad");
    let only_cert = ServerConfig {
        tls_key: None,
        ..tls_config(Some(&files))
    };
    let err = EmbeddedServer::start(only_cert, 1).unwrap_err();
    assert!(
        err.to_string().contains("tls_cert and tls_key go together"),
        "{err}"
    );
    let key_as_cert = ServerConfig {
        tls_cert: Some(files.key.clone()),
        ..tls_config(Some(&files))
    };
    let err = EmbeddedServer::start(key_as_cert, 1).unwrap_err();
    assert!(err.to_string().contains("no certificate in"), "{err}");
    let missing = ServerConfig {
        tls_cert: Some("/nonexistent/cert.pem".into()),
        ..tls_config(Some(&files))
    };
    let err = EmbeddedServer::start(missing, 1).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot read certificate /nonexistent/cert.pem"),
        "{err}"
    );
}
