//! A result saved before a change of names is still read: the fixtures are
//! a `run -o` of schema version 1 (`pitfalls`, `no_recommendation`), one
//! of schema version 2 (the recommendation's `reason`), a `tune -o` of
//! tune's schema version 1 (the recommendation's `settings`) and one of
//! version 2 (the fleet's `budget`); `report` and `compare` take them and
//! write today's names (CHANGELOG.md).
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
    assert_eq!(r["schema_version"], poolbench_model::SCHEMA_VERSION);
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

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_schema_2_result_is_read_with_its_recommendation_s_why() {
    let path = fixture("run-schema-2.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let why = saved["recommendation"]["reason"]
        .as_str()
        .expect("the old name");
    let (code, out, err) = poolbench(&["report", &path, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["schema_version"], poolbench_model::SCHEMA_VERSION);
    assert_eq!(r["recommendation"]["why"], why, "{out}");
    assert!(r["recommendation"].get("reason").is_none(), "{out}");
    let (code, text, err) = poolbench(&["report", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains(why), "{text}");
    let (code, _, err) = poolbench(&["compare", &path, &path]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_tune_of_schema_1_is_read_with_its_client_settings() {
    let path = fixture("tune-schema-1.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let settings = saved["recommendation"]["settings"]
        .as_array()
        .expect("the old name");
    assert!(!settings.is_empty());
    let (code, out, err) = poolbench(&["report", &path, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(t["schema_version"], poolbench_model::TUNE_SCHEMA_VERSION);
    assert_eq!(
        t["recommendation"]["client_settings"].as_array(),
        Some(settings)
    );
    let (code, text, err) = poolbench(&["report", &path]);
    assert_eq!(code, Some(0), "{err}");
    let first = settings[0]["setting"].as_str().unwrap();
    assert!(text.contains(first), "{text}");
}

#[test]
fn a_tune_of_schema_2_is_read_with_its_fleet_s_budget_as_the_connection_limit() {
    let path = fixture("tune-schema-2.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["schema_version"], 2);
    assert!(saved["fleet"]["budget"].is_u64(), "the old name");
    assert!(saved["fleet"]["rows"][0]["within_budget"].is_boolean());
    // Read (`within_budget` has no default: only its alias reads it), the
    // fleet concluded again, written under today's names.
    let (code, out, err) = poolbench(&["report", &path, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let t: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(t["schema_version"], poolbench_model::TUNE_SCHEMA_VERSION);
    let fleet = &t["fleet"];
    assert!(fleet.get("connection_limit").is_some(), "{fleet}");
    assert!(fleet.get("budget").is_none() && fleet.get("budget_source").is_none());
    let row = &fleet["rows"][0];
    assert!(row["within_limit"].is_boolean() && row.get("within_budget").is_none());
    let (code, text, err) = poolbench(&["report", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        text.contains("within limit") && !text.contains("budget of"),
        "{text}"
    );
}
