//! PostgreSQL as deployed: the query modes (`--query-mode`), errors by
//! SQLSTATE with the connection kept, and PgBouncer in transaction mode,
//! where named prepared statements break (the `transaction-pooler`
//! finding) and the unnamed statement and the simple protocol do not.
use crate::services::{cell_of as cell, pg_url, pgbouncer_tx_url, run_json};
use serde_json::Value;
use std::process::Command;

fn has_finding(r: &Value, id: &str) -> bool {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["id"] == id)
}

/// `SELECT $1::int` through the transaction pooler, pool:20 and shared at
/// c=20, in `mode`.
fn through_tx_pooler(mode: &str) -> Value {
    run_json(&[
        "run",
        &pgbouncer_tx_url(),
        "--query",
        "SELECT $1::int",
        "--param",
        "random(1,1000)",
        "--query-mode",
        mode,
        "-s",
        "pool:20,shared",
        "-c",
        "20",
        "-d",
        "1s",
        "--warmup",
        "200ms",
    ])
}

#[test]
fn prepared_statements_through_a_transaction_pooler_are_named_not_recommended() {
    let r = through_tx_pooler("prepared");
    assert_eq!(r["config"]["target_options"]["query_mode"], "prepared");
    let pool = cell(&r, "pool:20");
    let by_code = &pool["errors"]["by_status"];
    let failed = ["26000", "42P05"]
        .iter()
        .map(|c| by_code[c].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert!(failed > 0, "prepared statements fail: {}", pool["errors"]);
    let message = pool["errors"]["messages"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert!(
        message.as_str().unwrap().contains("prepared statement"),
        "{message}"
    );
    assert!(has_finding(&r, "transaction-pooler"), "{}", r["findings"]);
    assert!(r["recommendation"].is_null(), "{}", r["recommendation"]);
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("--query-mode extended or simple"),
        "{}",
        r["reason"]
    );
    // A server's error keeps the connection: no reconnect storm.
    let opened = pool["connections"]["opened"].as_u64().unwrap();
    assert!(opened <= 40, "opened {opened} connections for a pool of 20");
}

#[test]
fn the_unnamed_statement_and_the_simple_protocol_pass_a_transaction_pooler() {
    for mode in ["extended", "simple"] {
        let r = through_tx_pooler(mode);
        assert_eq!(r["config"]["target_options"]["query_mode"], mode);
        for strategy in ["pool:20", "shared"] {
            let c = cell(&r, strategy);
            assert!(c["ok"].as_u64().unwrap() > 0, "{mode} {strategy}");
            assert_eq!(
                c["errors"]["total"], 0,
                "{mode} {strategy}: {}",
                c["errors"]
            );
        }
        assert!(!has_finding(&r, "transaction-pooler"), "{mode}");
    }
}

#[test]
fn server_errors_are_counted_by_sqlstate_and_keep_the_connection() {
    for mode in ["prepared", "extended", "simple"] {
        let r = run_json(&[
            "run",
            &pg_url(),
            "--query",
            "SELECT 1/0",
            "--query-mode",
            mode,
            "-s",
            "pool:4,shared",
            "-c",
            "4",
            "-d",
            "500ms",
            "--warmup",
            "100ms",
        ]);
        for (strategy, size) in [("pool:4", 4), ("shared", 1)] {
            let c = cell(&r, strategy);
            let errors = &c["errors"];
            assert_eq!(c["ok"], 0, "{mode} {strategy}");
            let n = errors["by_status"]["22012"].as_u64().unwrap_or(0);
            assert!(n > 0, "{mode} {strategy}: {errors}");
            assert_eq!(errors["total"].as_u64(), Some(n), "{mode} {strategy}");
            assert_eq!(
                errors["messages"]["22012"], "division by zero (22012)",
                "{mode} {strategy}"
            );
            assert_eq!(
                c["connections"]["opened"], size,
                "{mode} {strategy}: each connection kept through its errors"
            );
        }
    }
}

#[test]
fn a_bad_query_mode_is_one_line_and_exit_2() {
    let go = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        err
    };
    let url = "postgres://u@127.0.0.1:1/db";
    let err = go(&["run", url, "--query-mode", "fast"]);
    assert!(err.contains("invalid query mode \"fast\""), "{err}");
    let err = go(&["run", "http://127.0.0.1:1/", "--query-mode", "simple"]);
    assert!(err.contains("--query-mode applies to postgres://"), "{err}");
    let err = go(&[
        "run",
        url,
        "--query-mode",
        "simple",
        "--query",
        "SELECT $1::int",
    ]);
    assert!(err.contains("takes 1 parameter(s) and 0 --param"), "{err}");
}
