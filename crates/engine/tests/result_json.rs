//! The result survives JSON, and its histograms merge exactly.
use crate::common::*;
use poolbench_model::{decode_histogram, RunResult, SCHEMA_VERSION};
use poolbench_server::ServerConfig;

#[test]
fn result_round_trips_through_json_and_histograms_merge() {
    let (server, mut plan) = server(ServerConfig::default());
    plan.strategies = strategies("pool:2,shared");
    plan.concurrency = vec![2];
    plan.requests = Some(400);
    let result = run_with(&server, &plan);

    let json = serde_json::to_string(&result).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["schema_version"], SCHEMA_VERSION);
    for key in ["target", "machine", "config", "cells"] {
        assert!(!value[key].is_null(), "missing {key}");
    }
    let cell = &value["cells"][0];
    for key in [
        "strategy",
        "concurrency",
        "pool_size",
        "requests",
        "throughput_rps",
        "latency_us",
        "checkout_wait_us",
        "connections",
        "histograms",
    ] {
        assert!(cell.get(key).is_some(), "cell lacks {key}");
    }
    assert!(cell["errors"]["total"].is_u64());
    assert!(cell["errors"]["by_kind"].is_object());
    for p in ["p50", "p90", "p99", "p999", "max", "mean", "stdev"] {
        assert!(cell["latency_us"][p].is_number(), "latency_us.{p}");
    }
    for k in ["opened", "closed", "peak_open"] {
        assert!(cell["connections"][k].is_u64(), "connections.{k}");
    }
    assert!(
        value["cells"][1]["pool_size"].is_null(),
        "shared has no size"
    );

    let back: RunResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back.cells.len(), result.cells.len());
    assert_eq!(back.cells[0].latency_us, result.cells[0].latency_us);

    let [mut a, ..] = back.cells[0].histograms.decode().unwrap();
    let b = decode_histogram(&back.cells[1].histograms.latency_ns).unwrap();
    assert_eq!(a.len(), back.cells[0].ok);
    let max = a.max().max(b.max());
    a.add(&b).unwrap();
    assert_eq!(a.len(), back.cells[0].ok + back.cells[1].ok);
    assert_eq!(a.max(), max);
}
