//! `--format junit` / `-o FILE.xml`: what CI systems read. Each document
//! is validated against the JUnit schema (Jenkins' junit-4 XSD, shipped in
//! the junit-report crate's source, which writes the XML) with xmllint, and
//! each failure carries the figure the run's JSON holds.
use crate::compare::result;
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("poolbench-junit-{}-{name}", std::process::id()))
}

/// The XSD in the junit-report crate's source, which cargo unpacked
/// under its home (the version Cargo.lock pins).
fn schema() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"junit-report\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .expect("Cargo.lock pins junit-report")
        .trim_matches('"')
        .to_string();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let registries = std::fs::read_dir(home.join("registry/src")).expect("cargo's registry");
    registries
        .filter_map(Result::ok)
        .map(|r| {
            r.path()
                .join(format!("junit-report-{version}/tests/JUnit.xsd"))
        })
        .find(|p| p.exists())
        .expect("junit-report's source with its JUnit.xsd")
}

/// xmllint (libxml2-utils, installed by scripts/setup.sh) accepts `xml`.
fn assert_valid(xml: &str, what: &str) {
    let file = temp(&format!("{what}.xml"));
    std::fs::write(&file, xml).unwrap();
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(schema())
        .arg(&file)
        .output()
        .expect("xmllint runs (scripts/setup.sh installs libxml2-utils)");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{what}: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each test case: (class, name, failure message if failed).
fn cases(xml: &str) -> Vec<(String, String, Option<String>)> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            let failure = n
                .children()
                .find(|c| c.has_tag_name("failure"))
                .map(|f| f.attribute("message").unwrap_or("").to_string());
            (
                n.attribute("classname").unwrap_or("").to_string(),
                n.attribute("name").unwrap_or("").to_string(),
                failure,
            )
        })
        .collect()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

#[test]
fn run_writes_a_case_per_slo_bound_per_cell_and_fails_the_ones_broken() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (xml_path, json_path) = (temp("run.xml"), temp("run.json"));
    // 10 ms a request: pool:1 gives about 100 req/s, pool:6 about 600.
    let out = bin()
        .args(["run", "-s", "pool:1,pool:6", "-c", "6", "-d", "800ms"])
        .args(["--warmup", "100ms", "--server-delay", "10ms", "--quiet"])
        .args(["--slo", "p99<2s,throughput>300", "--format", "junit", "-o"])
        .arg(&xml_path)
        .arg("-o")
        .arg(&json_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        code(&out),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&xml_path).unwrap();
    assert_eq!(stdout, written, "stdout and -o FILE.xml hold the same XML");
    assert_valid(&written, "run");
    let json: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let cases = cases(&written);
    assert_eq!(cases.len(), 4, "2 cells × 2 bounds: {cases:?}");
    for cell in json["cells"].as_array().unwrap() {
        let label = format!("{} c=6", cell["strategy"].as_str().unwrap());
        let rate = cell["throughput_rps"].as_f64().unwrap();
        let (_, _, failure) = cases
            .iter()
            .find(|(class, name, _)| *class == label && name.starts_with("SLO throughput"))
            .unwrap_or_else(|| panic!("no throughput case for {label}: {cases:?}"));
        match rate < 300.0 {
            true => {
                let msg = failure.as_deref().expect("a failure below the bound");
                assert!(msg.contains(&format!("throughput {rate:.0} <")), "{msg}");
            }
            false => assert!(failure.is_none(), "{label} at {rate} req/s: {failure:?}"),
        }
    }
    let failed = cases.iter().filter(|c| c.2.is_some()).count();
    assert_eq!(failed, 1, "pool:1 alone is under 300 req/s: {cases:?}");
    for p in [xml_path, json_path] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn compare_writes_a_case_per_fail_if_bound_per_cell() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (base, slow) = (result("junit-base", "1ms"), result("junit-slow", "8ms"));
    let out = bin()
        .args([
            "compare",
            "--format",
            "junit",
            "--fail-if",
            "throughput<-20%,p99>+1000%",
        ])
        .args([&base, &slow])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = String::from_utf8(out.stdout).unwrap();
    assert_valid(&xml, "compare");
    let cases = cases(&xml);
    assert_eq!(cases.len(), 2, "{cases:?}");
    let throughput = cases
        .iter()
        .find(|c| c.1 == "fail-if throughput<-20")
        .unwrap();
    let msg = throughput.2.as_deref().expect("the drop crossed the bound");
    assert!(msg.contains("pool:4 c=4: throughput -"), "{msg}");
    let p99 = cases.iter().find(|c| c.1 == "fail-if p99>1000").unwrap();
    assert!(p99.2.is_none(), "{p99:?}");
    for p in [base, slow] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn a_scenario_writes_a_case_per_expectation() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let toml = temp("scenario.toml");
    std::fs::write(
        &toml,
        r#"name = "junit"
title = "t"
shows = "t"

[[step]]
title = "clean"
serve = { delay = "1ms" }
target = "http://{http}/"
run = { strategies = ["pool:2"], concurrency = [2], duration = "300ms", warmup = "0s" }
expect = { errors = false, finding = ["stall"] }
"#,
    )
    .unwrap();
    let saved = temp("scenario.xml");
    let out = bin()
        .args(["scenario", "run", "--quiet", "--format", "junit"])
        .arg(&toml)
        .arg("-o")
        .arg(&saved)
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(xml, std::fs::read_to_string(&saved).unwrap());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected of this step"),
        "the report goes to stderr"
    );
    assert_valid(&xml, "scenario");
    let cases = cases(&xml);
    assert_eq!(cases.len(), 2, "{cases:?}");
    let errors = cases.iter().find(|c| c.1 == "errors: false").unwrap();
    assert!(errors.2.is_none(), "{errors:?}");
    let stall = cases.iter().find(|c| c.1 == "finding stall named").unwrap();
    assert_eq!(stall.0, "scenario junit step 1");
    assert!(stall.2.as_deref().unwrap().contains("not met"), "{stall:?}");
    for p in [toml, saved] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn junit_is_refused_where_it_means_nothing() {
    let out = bin()
        .args(["scenario", "run", "slow-api-pools", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("text or junit"), "{err}");
}
