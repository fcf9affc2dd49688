//! Findings that hold for a server poolbench did not start and cannot
//! read counters from: Python's http.server, slow or frozen.
use crate::services::finding_of as finding;
use crate::support::{run, Recorder};
use crate::turns::ONE_AT_A_TIME;
use std::process::Command;

#[test]
fn the_closed_loop_ceiling_is_flagged_for_an_external_server_and_nothing_recommended() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let server = Recorder::start("ceiling");
    let r = run(&[
        &server.url("/sleep/200/x"),
        "-s",
        "pool:10,per-request",
        "-c",
        "10",
        "-d",
        "1500ms",
        "--warmup",
        "500ms",
    ]);
    let cells = r["cells"].as_array().unwrap();
    assert!(
        cells.iter().all(|c| c["server"].is_null()),
        "no counters read"
    );
    let ceiling = finding(&r, "closed-loop-ceiling").expect("ceiling flagged");
    assert_eq!(ceiling["cells"].as_array().unwrap().len(), 2, "{ceiling}");
    let evidence = ceiling["evidence"][0].as_str().unwrap();
    assert!(evidence.contains("fastest mean request time"), "{evidence}");
    assert!(r["recommendation"].is_null(), "{}", r["recommendation"]);
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("closed-loop ceiling"), "{why}");
    // 2 cells of 2 s at 10 ÷ 200 ms: the server answered what was measured.
    assert!(server.seen().len() >= 100, "{}", server.seen().len());
}

#[test]
fn a_frozen_server_gets_no_recommendation_and_its_reconnects_are_the_clients() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let server = Recorder::start("frozen");
    let url = server.url("/sleep/3000/x");
    let r = run(&[
        &url,
        "-s",
        "pool:4",
        "-c",
        "4",
        "-d",
        "1200ms",
        "--timeout",
        "300ms",
    ]);
    let cell = &r["cells"][0];
    assert!(cell["errors"]["by_kind"]["timeout"].as_u64().unwrap() > 4);
    assert!(r["recommendation"].is_null());
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("failed more than 1%"), "{why}");
    let reconnects = finding(&r, "reconnects").expect("reconnects");
    let evidence = reconnects["evidence"][0].as_str().unwrap();
    assert!(
        evidence.contains("by the client after its own request timeouts")
            && !evidence.contains("by the server"),
        "{evidence}"
    );
    // The text report says why too.
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", &url, "-s", "pool:2", "-c", "2", "-d", "700ms"])
        .args(["--timeout", "200ms", "--warmup", "0s", "--quiet"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Recommendation: none — every cell at c=2 failed more than 1%"),
        "{text}"
    );
}

#[test]
fn the_knee_of_a_python_service_with_four_workers() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // 4 requests at once, 20 ms each: 200 req/s at c=4, then only the
    // latency grows. pool:32 never queues in the client.
    let server = Recorder::start("knee");
    let r = run(&[
        &server.url("/limit/4/20/x"),
        "-s",
        "pool:32",
        "-c",
        "1,2,4,8,16",
        "-d",
        "1s",
        "--warmup",
        "300ms",
    ]);
    let knee = finding(&r, "target-saturated").expect("knee found");
    let cells = knee["cells"].as_array().unwrap();
    // At c=4 or, on a machine too slow to keep four busy, the next level;
    // never before the limit.
    assert!(
        cells == &["pool:32 c=4"] || cells == &["pool:32 c=8"],
        "{knee}"
    );
    let top = r["cells"].as_array().unwrap().last().unwrap();
    let rps = top["throughput_rps"].as_f64().unwrap();
    assert!(rps < 230.0, "above the service's 200 req/s: {rps}");
}
