//! TLS as real clients do it, against nginx (the OS package, started by
//! scripts/services.sh): sessions resumed or not, counted per cell; the
//! self-signed certificate `openssl req -x509` makes, trusted by
//! `--cacert`; client certificates required by the server.
use crate::services::{nginx_tls, run_failing, run_json, test_ca};
use serde_json::Value;

fn per_request(url: &str, resume: &str, extra: &[&str]) -> Value {
    let ca = test_ca();
    let mut args = vec![
        "run",
        url,
        "-s",
        "per-request",
        "-c",
        "2",
        // Forty requests, not a duration: a busy machine's handshakes took
        // most of a 500 ms run once. The cap is a hang guard.
        "-n",
        "40",
        "-d",
        "30s",
        "--warmup",
        "0s",
        "--cacert",
        &ca,
        "--tls-resume",
        resume,
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

/// The one cell's TLS facts, after checking it ran without errors.
fn tls_of(r: &Value) -> (Value, u64) {
    let c = &r["cells"][0];
    assert!(c["requests"].as_u64().unwrap() > 20, "{c}");
    assert_eq!(c["errors"]["total"], 0, "{}", c["errors"]);
    (
        c["tls"].clone(),
        c["connections"]["opened"].as_u64().unwrap(),
    )
}

fn count(t: &Value, key: &str) -> u64 {
    t[key].as_u64().unwrap_or_else(|| panic!("no {key} in {t}"))
}

#[test]
fn per_request_resumes_tls_sessions_unless_told_not_to_and_counts_every_handshake() {
    let nginx = nginx_tls();
    let (on, opened_on) = tls_of(&per_request(&nginx.url, "on", &[]));
    assert_eq!(on["resumption"], true);
    assert!(count(&on, "resumed") > 0, "{on}");
    assert!(count(&on, "resumed") > count(&on, "full"), "{on}");
    assert_eq!(
        count(&on, "full") + count(&on, "resumed"),
        opened_on,
        "{on}"
    );
    let (off, opened_off) = tls_of(&per_request(&nginx.url, "off", &[]));
    assert_eq!(off["resumption"], false);
    assert_eq!(count(&off, "resumed"), 0, "{off}");
    assert_eq!(count(&off, "full"), opened_off, "{off}");
    // What was negotiated, per handshake: nginx prefers h2 and TLS 1.3.
    assert_eq!(off["alpn"]["h2"].as_u64(), Some(opened_off), "{off}");
    assert_eq!(
        off["versions"]["TLSv1_3"].as_u64(),
        Some(opened_off),
        "{off}"
    );
    let suites: u64 = off["cipher_suites"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(suites, opened_off, "{off}");
}

#[test]
fn http1_over_tls_resumes_too() {
    let nginx = nginx_tls();
    let (t, opened) = tls_of(&per_request(&nginx.url, "on", &["--http1"]));
    assert_eq!(t["alpn"]["http/1.1"].as_u64(), Some(opened), "{t}");
    assert!(count(&t, "resumed") > 0, "{t}");
}

#[test]
fn tls_1_2_resumes_by_session_id_or_ticket() {
    let nginx = nginx_tls();
    let (on, opened) = tls_of(&per_request(&nginx.tls12_url, "on", &[]));
    assert_eq!(on["versions"]["TLSv1_2"].as_u64(), Some(opened), "{on}");
    assert!(count(&on, "resumed") > count(&on, "full"), "{on}");
    let (off, opened) = tls_of(&per_request(&nginx.tls12_url, "off", &[]));
    assert_eq!(count(&off, "full"), opened, "{off}");
    assert_eq!(count(&off, "resumed"), 0, "{off}");
}

#[test]
fn a_self_signed_certificate_marked_as_a_ca_is_trusted_when_given_in_cacert() {
    let nginx = nginx_tls();
    let r = run_json(&[
        "run",
        &nginx.self_signed_url,
        "-s",
        "pool:1",
        "-c",
        "1",
        "-n",
        "10",
        "-d",
        "30s",
        "--cacert",
        &nginx.self_signed,
    ]);
    assert_eq!(r["cells"][0]["errors"]["total"], 0, "{}", r["cells"][0]);
    // Another CA in --cacert: the message names the cause and the fix,
    // not a bare "--cacert FILE trusts it" for the flag already given.
    let ca = test_ca();
    let (code, err) = run_failing(&[
        "run",
        &nginx.self_signed_url,
        "-d",
        "300ms",
        "--cacert",
        &ca,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("presents a CA certificate as its own"),
        "{err}"
    );
    assert!(err.contains(&format!("not in --cacert {ca}")), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The name is still checked: 127.0.0.1 is in it, example.com is not.
    let port = nginx.self_signed_url.rsplit(':').next().unwrap();
    let wrong = format!("https://example.com:{port}/");
    let (code, err) = run_failing(&["run", &wrong, "-d", "300ms", "--cacert", &nginx.self_signed]);
    assert!(code == Some(2) || code == Some(1), "{err}");
}

#[test]
fn a_server_requiring_client_certificates_takes_ours_and_refuses_to_start_without() {
    let nginx = nginx_tls();
    let ca = test_ca();
    let base = [
        "run",
        &nginx.mtls_url,
        "-s",
        "pool:1",
        "-c",
        "1",
        "-n",
        "10",
        "-d",
        "30s",
        "--cacert",
        &ca,
    ];
    let mut with = base.to_vec();
    with.extend_from_slice(&["--cert", &nginx.client_cert, "--key", &nginx.client_key]);
    let r = run_json(&with);
    assert_eq!(r["cells"][0]["errors"]["total"], 0, "{}", r["cells"][0]);
    assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0);
    let (code, err) = run_failing(&base);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("asks for a client certificate"), "{err}");
    assert!(err.contains("--cert FILE --key FILE"), "{err}");
    // A key that is not the certificate's: one line, exit 2, before load.
    let self_key = nginx.self_signed.replace("self.pem", "self-key.pem");
    let mut wrong = base.to_vec();
    wrong.extend_from_slice(&["--cert", &nginx.client_cert, "--key", &self_key]);
    let (code, err) = run_failing(&wrong);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not the key of --cert"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
