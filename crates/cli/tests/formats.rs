//! Every output of one run read back: the JSON against `poolbench schema`,
//! the CSV (every figure of each JSON cell), the HdrHistogram interval
//! logs (with hdrhistogram's own reader, adding up to the cell), and the
//! wrk2-style spectrum of `--latency`.
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("poolbench-formats-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn validate(schema: &Value, doc: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

/// Scalar leaves of a JSON cell, as the CSV names its columns.
fn leaves(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if prefix.is_empty()
                    && ["histograms", "timeline", "latency_intervals"].contains(&k.as_str())
                {
                    continue;
                }
                let key = match prefix.is_empty() {
                    true => k.clone(),
                    false => format!("{prefix}.{k}"),
                };
                leaves(&key, x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn read_log(path: &Path) -> Vec<(f64, f64, Histogram<u64>)> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.expect("a well-formed interval log") {
            let raw = STANDARD.decode(i.encoded_histogram()).expect("base64");
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .expect("a V2 compressed histogram");
            out.push((
                i.start_timestamp().as_secs_f64(),
                i.duration().as_secs_f64(),
                h,
            ));
        }
    }
    out
}

#[test]
fn every_output_reads_back() {
    let d = dir("all");
    let logs = d.join("hlog");
    let (json, csv) = (d.join("r.json"), d.join("r.csv"));
    let text = ok(bin()
        .args(["run", "-s", "pool:2,shared", "-c", "4", "-d", "2200ms"])
        .args(["--warmup", "200ms", "--quiet", "--latency", "--hdr-log"])
        .arg(&logs)
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .output()
        .unwrap());
    let result: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let cells = result["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);

    // The schema describes the result, and `report` and `merge` outputs.
    let schema: Value = serde_json::from_str(&ok(bin().arg("schema").output().unwrap())).unwrap();
    let version = format!("schema version {}", poolbench_model::SCHEMA_VERSION);
    assert!(schema["title"].as_str().unwrap().contains(&version));
    validate(&schema, &result, "run -o");
    let again = ok(bin()
        .args(["report", "--format", "json"])
        .arg(&json)
        .output()
        .unwrap());
    validate(&schema, &serde_json::from_str(&again).unwrap(), "report");
    let merged = ok(bin()
        .args(["merge", "--format", "json"])
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap());
    validate(&schema, &serde_json::from_str(&merged).unwrap(), "merge");
    // A result missing a field the schema requires is not valid.
    let mut broken = result.clone();
    broken["cells"][0]
        .as_object_mut()
        .unwrap()
        .remove("latency_us");
    assert!(!jsonschema::is_valid(&schema, &broken));

    // CSV: a header, one row per cell, every figure of the JSON cell.
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), cells.len());
    for (row, cell) in rows.iter().zip(cells) {
        let mut want = BTreeMap::new();
        leaves("", cell, &mut want);
        assert!(want.len() > 60, "{} figures", want.len());
        for (key, value) in &want {
            let i = header
                .iter()
                .position(|h| h == key)
                .unwrap_or_else(|| panic!("no CSV column {key}"));
            let got = &row[i];
            match value {
                Value::Number(n) => {
                    let g: f64 = got.parse().unwrap_or_else(|_| panic!("{key}: {got}"));
                    assert_eq!(g, n.as_f64().unwrap(), "{key}");
                }
                Value::String(s) => assert_eq!(got, s, "{key}"),
                Value::Null => assert_eq!(got, "", "{key}"),
                other => assert_eq!(got, other.to_string(), "{key}"),
            }
        }
    }

    // One interval log per cell: 1 s intervals adding up to the cell.
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["01-pool-2-c4.hlog", "02-shared-c4.hlog"]);
    for (name, cell) in names.iter().zip(cells) {
        let intervals = read_log(&logs.join(name));
        assert!(
            intervals.len() >= 2,
            "{name}: {} intervals",
            intervals.len()
        );
        let mut total: Histogram<u64> = Histogram::new(3).unwrap();
        for (i, (start, duration, h)) in intervals.iter().enumerate() {
            assert!(
                (start - i as f64).abs() < 1e-3,
                "{name}: interval at {start} s"
            );
            assert!(*duration > 0.0 && *duration <= 1.0);
            total.add(h).unwrap();
        }
        assert_eq!(total.len(), cell["ok"].as_u64().unwrap(), "{name}");
        let p99_us = total.value_at_quantile(0.99) as f64 / 1000.0;
        assert_eq!(
            p99_us,
            cell["latency_us"]["p99"].as_f64().unwrap(),
            "{name}"
        );
    }
    // `report` writes the same logs from the saved JSON.
    let logs2 = d.join("hlog2");
    ok(bin()
        .args(["report", "--hdr-log"])
        .arg(&logs2)
        .arg(&json)
        .output()
        .unwrap());
    for name in &names {
        assert_eq!(
            std::fs::read(logs.join(name)).unwrap(),
            std::fs::read(logs2.join(name)).unwrap()
        );
    }

    // --latency: the wrk2 spectrum for each cell, ending at 100%.
    assert_eq!(text.matches("Detailed percentile spectrum").count(), 2);
    assert_eq!(text.matches(" 99.999%").count(), 2);
    assert_eq!(text.matches("#[Max     =").count(), 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_hdr_log_needs_intervals_and_a_writable_directory() {
    let d = dir("bad");
    let json = d.join("r.json");
    ok(bin()
        .args([
            "run", "-s", "shared", "-c", "1", "-d", "200ms", "--warmup", "0s",
        ])
        .arg("--quiet")
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap());
    let out = bin()
        .args(["report", "--hdr-log"])
        .arg(d.join("logs"))
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not ask for --hdr-log"));
    // A file where the directory should be: refused before any load.
    let file = d.join("file");
    std::fs::write(&file, "x").unwrap();
    let out = bin()
        .args(["run", "-s", "shared", "-c", "1", "-d", "10s", "--hdr-log"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hdr-log"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_text_report_leads_with_a_summary_and_folds_what_holds_everywhere() {
    // One run per cell: few-samples holds for every cell.
    let text = ok(bin()
        .args(["run", "-s", "pool:2,shared,per-request", "-c", "1,4"])
        .args(["-d", "300ms", "--warmup", "0s", "--quiet"])
        .output()
        .unwrap());
    let summary = text.find("\nSummary\n").expect("a summary");
    let details = text.find("\nDetails\n").expect("details");
    assert!(summary < details, "{text}");
    let head = &text[summary..details];
    assert!(head.contains("Recommendation:"), "{head}");
    assert!(head.contains("best per concurrency:"), "{head}");
    assert!(head.contains("c=1 ") && head.contains("c=4 "), "{head}");
    assert!(head.contains("few-samples (every cell)"), "{head}");
    // In the details, one line stands for the six cells.
    let findings = &text[text.find("\nFindings\n").expect("findings")..];
    let few = findings
        .split("\n  ! ")
        .find(|p| p.starts_with("few-samples"))
        .expect("few-samples");
    let lines: Vec<&str> = few.lines().skip(1).collect();
    assert_eq!(lines.len(), 1, "{few}");
    assert!(
        lines[0].trim().starts_with("every cell (6), e.g. "),
        "{few}"
    );
}
