//! `head-of-line` on both sides of its threshold: requests on a pipelined
//! connection that waited behind the answer before theirs.
use crate::support::{cell, evidence, run, summary};
use poolbench_model::CellResult;

/// A pipelined cell whose requests take `request_ms` on average, of which
/// `behind_ms` behind the answer before them.
fn pipelined(request_ms: f64, behind_ms: Option<f64>) -> CellResult {
    cell("pipeline:2x8", 16)
        .throughput(16_000.0 / request_ms)
        .latency_ms(request_ms)
        .with(|c| {
            c.behind_us = behind_ms.map(|b| summary(c.ok, b * 1000.0, b * 4000.0));
        })
        .build()
}

#[test]
fn a_third_of_the_request_behind_an_earlier_answer_is_named() {
    let lines = evidence(&run(vec![pipelined(30.0, Some(10.0))]), "head-of-line");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("33% of the request time"), "{}", lines[0]);
    assert!(lines[0].contains("pipeline:2x8"), "{}", lines[0]);
}

#[test]
fn little_or_no_wait_behind_is_not() {
    // Under 10% of the request time.
    assert!(evidence(&run(vec![pipelined(30.0, Some(2.9))]), "head-of-line").is_empty());
    // Strategies that do not pipeline carry no `behind_us`.
    assert!(evidence(&run(vec![pipelined(30.0, None)]), "head-of-line").is_empty());
}

/// A pipelined cell against a server that answers one request a
/// connection: `resets` failed behind answers, `per` answers a connection.
fn refused(resets: u64, per: f64) -> CellResult {
    failing("reset", resets, per)
}

/// The same, the requests behind failing as `kind`.
fn failing(kind: &str, n: u64, per: f64) -> CellResult {
    let mut c = cell("pipeline:2x4", 8)
        .throughput(600.0)
        .latency_ms(2.0)
        .errors(kind, n)
        .build();
    c.behind_us = Some(summary(c.ok, 100.0, 400.0));
    c.connections.opened = (c.ok as f64 / per).ceil() as u64;
    c
}

#[test]
fn a_server_answering_one_request_a_connection_is_named() {
    let lines = evidence(&run(vec![refused(300, 1.0)]), "pipeline-refused");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("300 requests failed"), "{}", lines[0]);
    assert!(lines[0].contains("1.0 answers each"), "{}", lines[0]);
}

#[test]
fn a_server_that_stops_answering_after_one_a_connection_is_named() {
    // The connections stay open; what was written behind the first answer
    // times out.
    let lines = evidence(&run(vec![failing("timeout", 40, 1.0)]), "pipeline-refused");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("40 requests timed out"), "{}", lines[0]);
    assert!(
        lines[0].contains("stopped reading or answering"),
        "{}",
        lines[0]
    );
    // A pipelining server that timed out now and then is not.
    let busy = failing("timeout", 40, 300.0);
    assert!(evidence(&run(vec![busy]), "pipeline-refused").is_empty());
}

#[test]
fn a_connection_carrying_many_answers_or_no_resets_is_not() {
    // A pipelining server whose connections were reset now and then.
    assert!(evidence(&run(vec![refused(3, 500.0)]), "pipeline-refused").is_empty());
    // No failures at all.
    assert!(evidence(&run(vec![refused(0, 1.0)]), "pipeline-refused").is_empty());
}
