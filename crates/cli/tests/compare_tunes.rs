//! `poolbench compare` on saved tunes (fixtures written by real tunes of
//! the built-in server, `bench/compare-tunes.sh --keep DIR`:
//! `--server-delay 20ms`, `-c 48`, at most 24 in flight served, again,
//! and at most 18): the gate
//! passes on the same service twice and fails on the slower one; a tune
//! with a run, or a bound the kind has not, is refused in one line.
use std::process::{Command, Output};

pub(crate) fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn compare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

const GATE: &str = "peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%";

#[test]
fn the_same_service_tuned_twice_passes_the_gate() {
    let (a, b) = (
        fixture("tune-serves-24.json"),
        fixture("tune-serves-24-again.json"),
    );
    let out = compare(&[&a, &b, "--fail-if", GATE]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("poolbench compare · two tunes\n"),
        "{text}"
    );
    assert!(!text.contains("  - "), "no other change said: {text}");
}

#[test]
fn a_service_serving_fewer_at_once_fails_the_gate() {
    let (a, b) = (
        fixture("tune-serves-24.json"),
        fixture("tune-serves-18.json"),
    );
    let dir = std::env::temp_dir().join(format!("poolbench-cmp-tunes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (xml, md, html) = (dir.join("g.xml"), dir.join("g.md"), dir.join("g.html"));
    let out = compare(&[
        &a,
        &b,
        "--fail-if",
        GATE,
        "--format",
        "json",
        "-o",
        xml.to_str().unwrap(),
        "-o",
        md.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--fail-if crossed: peak -"), "{err}");
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let figure = |name: &str| {
        c["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()
            .clone()
    };
    for name in ["peak", "serves"] {
        let f = figure(name);
        assert_eq!(f["significant"], true, "{f}");
        assert!(f["change_pct"].as_f64().unwrap() < -10.0, "{f}");
    }
    let answer = c["summary"][0].as_str().unwrap();
    assert!(answer.starts_with("this build serves 2"), "{answer}");
    assert!(
        answer.contains("the service now serves about 18 at a time (was 24)"),
        "{answer}"
    );
    // The JSON is what `poolbench schema figure-comparison` describes.
    let schema = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["schema", "figure-comparison"])
        .output()
        .unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&c).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // JUnit: one case per bound; Markdown and HTML written too.
    let xml = std::fs::read_to_string(xml).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 5, "{xml}");
    assert!(xml.contains("name=\"fail-if peak&lt;-10\""), "{xml}");
    assert!(std::fs::read_to_string(md).unwrap().contains(answer));
    assert!(std::fs::read_to_string(html)
        .unwrap()
        .contains("<svg class=\"chart compare\""));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tune_and_a_run_are_not_compared() {
    let (tune, run) = (fixture("tune-serves-24.json"), fixture("run-schema-2.json"));
    for (a, b) in [(&tune, &run), (&run, &tune)] {
        let out = compare(&[a, b]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("is a tune result") && err.contains("is a run result"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_bound_the_kind_has_not_is_refused() {
    let tune = fixture("tune-serves-24.json");
    let out = compare(&[&tune, &tune, "--fail-if", "errors>+1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("two tune results compare peak, knee"), "{err}");
    let run = fixture("run-schema-2.json");
    let out = compare(&[&run, &run, "--fail-if", "knee<-10%"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("two run results compare throughput"), "{err}");
}
