//! A result saved before a change of names is still read: the fixture is
//! a `run -o` of schema version 1 (`pitfalls`, `no_recommendation`), and
//! `report` and `compare` take it and write today's names (CHANGELOG.md).
use serde_json::Value;
use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/run-schema-1.json"
);

fn poolbench(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_schema_1_result_is_read_by_report_and_compare() {
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(saved["schema_version"], 1);
    let old = saved["pitfalls"].as_array().expect("the old name").len();
    assert!(old > 0);
    // report: read, analysed again, written under today's names.
    let (code, out, err) = poolbench(&["report", FIXTURE, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["schema_version"], 2);
    assert!(r.get("pitfalls").is_none(), "{out}");
    assert_eq!(r["findings"].as_array().unwrap().len(), old);
    let (code, text, err) = poolbench(&["report", FIXTURE]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("\nFindings\n"), "{text}");
    // compare: the saved file against itself, cell by cell.
    let (code, out, err) = poolbench(&["compare", FIXTURE, FIXTURE, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let c: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["cells"].as_array().unwrap().len(), 2, "{out}");
}
