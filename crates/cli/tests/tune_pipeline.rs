//! `tune -s pipeline`: N connections searched as pool sizes are, each
//! with ⌈c ÷ N⌉ requests written ahead, compared with `pool` at the
//! client's load, the fewest connections winning a tie. This proves the
//! wiring (both families searched, each window ⌈c ÷ N⌉, the clients'
//! settings); the sizes the search picks are tested on a simulated
//! service (crates/tune/tests/tune_answers.rs).
use crate::services::{tune_json, tune_trail as trail};
use crate::turns::ONE_AT_A_TIME;

#[test]
fn a_pipeline_is_sized_like_a_pool_and_compared_with_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (r, _) = tune_json(
        &[
            "--server-delay",
            "10ms",
            "--server-max-inflight",
            "8",
            "-c",
            "32",
            "-s",
            "pool,pipeline",
            "--budget",
            "30s",
            "--threads",
            "1",
            "--no-idle-probe",
        ],
        &[0],
    );
    let found = |family: &str| {
        r["families_found"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["family"] == family)
            .cloned()
            .unwrap_or_else(|| panic!("{family}: {}", r["families_found"]))
    };
    let pipe = found("pipeline");
    let n = pipe["pool_size"]
        .as_u64()
        .unwrap_or_else(|| panic!("{pipe}\n{}", trail(&r)));
    assert!(n >= 1, "pipeline {n}\n{}", trail(&r));
    let pool = found("pool");
    assert!(pool["pool_size"].as_u64().is_some(), "{pool}");
    // Every pipelined point gave each of the 32 workers a place in a
    // window: D = ⌈32 ÷ N⌉.
    let points = r["points"].as_array().unwrap();
    let pipelined: Vec<&str> = points
        .iter()
        .filter_map(|p| p["strategy"].as_str())
        .filter(|s| s.starts_with("pipeline:"))
        .collect();
    assert!(!pipelined.is_empty(), "{}", trail(&r));
    for s in pipelined {
        let (n, d) = s["pipeline:".len()..].split_once('x').unwrap();
        let (n, d): (u64, u64) = (n.parse().unwrap(), d.parse().unwrap());
        assert_eq!(d, 32u64.div_ceil(n), "{s}");
    }
    // The answer: the fewer connections of the two, within 5% of the
    // better; said in the clients that pipeline when it is the pipeline.
    let rec = &r["recommendation"];
    assert!(rec["pool_size"].as_u64().is_some(), "{rec}");
    if rec["strategy"] == "pipeline" {
        let settings = rec["client_settings"].to_string();
        assert!(settings.contains("max_pipeline_size"), "{settings}");
        assert!(settings.contains("pipelining"), "{settings}");
    }
}
