//! `transaction-pooler`: prepared statements missing or taken (SQLSTATE
//! 26000, 42P05, or a proxy's own text) name a transaction-pooling proxy,
//! and the run recommends nothing.
use crate::support::{cell, evidence, ids, quiet, run, CellBuilder};
use poolbench_analysis::analyze;

/// A cell whose `n` status errors carried `code` with `message`.
fn failing(code: &str, message: &str, n: u64) -> CellBuilder {
    let (code, message) = (code.to_string(), message.to_string());
    cell("pool:20", 20)
        .throughput(900.0)
        .errors("status", n)
        .with(move |c| {
            c.errors.by_status.insert(code.clone(), n);
            c.errors.messages.insert(code, message);
        })
}

#[test]
fn prepared_statement_errors_name_the_proxy() {
    let c = failing(
        "26000",
        "prepared statement \"poolbench\" does not exist (26000)",
        57,
    )
    .with(|c| {
        c.errors.total += 3;
        c.errors.by_status.insert("42P05".into(), 3);
    })
    .build();
    assert_eq!(
        evidence(&run(vec![c]), "transaction-pooler"),
        ["pool:20 c=20: 60 prepared-statement errors, e.g. \"prepared statement \"poolbench\" does not exist (26000)\""]
    );
    // A proxy's own text, under another code.
    let own = failing(
        "08P01",
        "prepared statement \"s0\" does not exist (08P01)",
        5,
    )
    .build();
    assert_eq!(
        evidence(&run(vec![own]), "transaction-pooler").len(),
        1,
        "the text alone is enough"
    );
}

#[test]
fn other_server_errors_and_clean_runs_do_not() {
    let div = failing("22012", "division by zero (22012)", 40).build();
    assert!(!ids(&run(vec![div])).contains(&"transaction-pooler".to_string()));
    assert!(
        !ids(&run(vec![quiet("pool:20", 20, 900.0)])).contains(&"transaction-pooler".to_string())
    );
}

#[test]
fn the_recommendation_is_refused() {
    // One cell clean (shared, on one connection the proxy kept on one
    // server connection), one failing: still no answer.
    let mut r = run(vec![
        cell("shared", 20).throughput(1500.0).p99_ms(30.0).build(),
        failing(
            "42P05",
            "prepared statement \"s0\" already exists (42P05)",
            30,
        )
        .build(),
    ]);
    analyze(&mut r);
    assert!(r.recommendation.is_none());
    let why = r.reason.expect("a reason");
    assert!(
        why.contains("transaction-pooling proxy")
            && why.contains("--query-mode extended or simple"),
        "{why}"
    );
}
