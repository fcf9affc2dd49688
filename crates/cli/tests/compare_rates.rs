//! `poolbench compare` on saved find-rates (fixtures written by real
//! `tune --find-rate --slo 'p99<100ms'` runs of the built-in server,
//! `--server-delay 20ms`, at most 24 in flight served, again, and at most
//! 18): the gate passes on the same service twice and fails on the
//! slower one, in every format; a find-rate with a tune, or a tune's
//! bound, is refused in one line.
use crate::compare_tunes::{compare, fixture};

#[test]
fn the_same_service_searched_twice_passes_the_rate_gate() {
    let out = compare(&[
        &fixture("rate-serves-24.json"),
        &fixture("rate-serves-24-again.json"),
        "--fail-if",
        "rate<-10%,throughput<-10%",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("this build holds as much"), "{text}");
}

#[test]
fn a_service_holding_a_quarter_less_fails_the_rate_gate_in_every_format() {
    let dir = std::env::temp_dir().join(format!("poolbench-cmp-rates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (xml, json) = (dir.join("gate.xml"), dir.join("gate.json"));
    let out = compare(&[
        &fixture("rate-serves-24.json"),
        &fixture("rate-serves-18.json"),
        "--fail-if",
        "rate<-10%",
        "-o",
        xml.to_str().unwrap(),
        "-o",
        json.to_str().unwrap(),
    ]);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert!(text.contains("this build holds 25% less"), "{text}");
    assert!(err.contains("--fail-if crossed: rate -25"), "{err}");
    let junit = std::fs::read_to_string(&xml).unwrap();
    assert!(junit.contains("<failure"), "{junit}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["kind"], "rate");
    assert_eq!(doc["figures"][0]["significant"], true);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_find_rate_with_a_tune_or_a_tune_bound_is_refused() {
    let out = compare(&[
        &fixture("rate-serves-24.json"),
        &fixture("tune-serves-24.json"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a find-rate result") && err.contains("is a tune result"),
        "{err}"
    );
    let out = compare(&[
        &fixture("rate-serves-24.json"),
        &fixture("rate-serves-18.json"),
        "--fail-if",
        "knee<-10%",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("two rate results compare rate, throughput, p99"),
        "{err}"
    );
}
