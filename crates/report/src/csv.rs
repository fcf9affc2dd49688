//! CSV: one row per cell with every figure of the JSON cell, header
//! included. Nested objects become dotted columns (`latency_us.p99`,
//! `errors.by_kind.timeout`); lists (stalls, samples, SLO breaches) are one
//! column holding their JSON. The raw data behind the figures, the encoded
//! histograms and the per-100 ms timeline, stay in the JSON.
use poolbench_model::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;

/// The columns that name a cell, first; the rest follow by name.
const KEY: [&str; 6] = [
    "strategy",
    "concurrency",
    "pool_size",
    "connection_cap",
    "model",
    "reps",
];

/// Left out: raw data, not figures.
const RAW: [&str; 3] = ["histograms", "timeline", "latency_intervals"];

/// The cells as CSV.
pub fn render_csv(result: &RunResult) -> String {
    let rows: Vec<BTreeMap<String, String>> = result
        .cells
        .iter()
        .map(|c| {
            let mut row = BTreeMap::new();
            let value = serde_json::to_value(c).expect("a cell always serializes");
            flatten("", &value, &mut row);
            row
        })
        .collect();
    let mut columns: Vec<String> = KEY.iter().map(|k| k.to_string()).collect();
    let mut rest: Vec<&String> = rows.iter().flat_map(|r| r.keys()).collect();
    rest.sort();
    rest.dedup();
    columns.extend(
        rest.into_iter()
            .filter(|k| !KEY.contains(&k.as_str()))
            .cloned(),
    );
    let mut out = columns
        .iter()
        .map(|c| quote(c))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in &rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| row.get(c).map(|v| quote(v)).unwrap_or_default())
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

fn flatten(prefix: &str, value: &Value, row: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if prefix.is_empty() && RAW.contains(&k.as_str()) {
                    continue;
                }
                let key = match prefix.is_empty() {
                    true => k.clone(),
                    false => format!("{prefix}.{k}"),
                };
                flatten(&key, v, row);
            }
        }
        Value::Null => {
            row.insert(prefix.to_string(), String::new());
        }
        Value::String(s) => {
            row.insert(prefix.to_string(), s.clone());
        }
        Value::Array(_) => {
            row.insert(prefix.to_string(), value.to_string());
        }
        other => {
            row.insert(prefix.to_string(), other.to_string());
        }
    }
}

fn quote(s: &str) -> String {
    match s.contains([',', '"', '\n']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}
