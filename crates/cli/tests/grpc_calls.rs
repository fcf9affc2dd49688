//! Any unary gRPC method, described by a .proto file or by the server's
//! reflection, called with a JSON message, against a server written in
//! Python (grpcio) with its own proto.
use crate::support::{run, PyGrpc, PROTO_ROOT};
use serde_json::Value;
use std::collections::BTreeSet;

const CREATE: &str = "shop.v1.Orders/Create";
const DATA: &str = r#"{"item": {random:1..3}, "customer": "c{seq}", "tags": ["x"], "price": {"currency": "EUR", "units": 5}}"#;

fn orders_proto() -> String {
    format!("{PROTO_ROOT}/shop/v1/orders.proto")
}

/// Each request the server saw was the message asked for: the fixed fields
/// as given, `{seq}` distinct per call, `{random}` within its range.
fn check_seen(seen: &[Value], measured: u64) {
    assert!(
        seen.len() as u64 >= measured && measured >= 10,
        "{} requests seen, {measured} measured",
        seen.len()
    );
    let mut customers = BTreeSet::new();
    for r in seen {
        let item: u64 = r["item"].as_str().unwrap().parse().unwrap();
        assert!((1..=3).contains(&item), "{r}");
        assert_eq!(r["price"]["currency"], "EUR", "{r}");
        assert_eq!(r["price"]["units"], "5", "{r}");
        assert_eq!(r["tags"][0], "x", "{r}");
        assert!(
            customers.insert(r["customer"].as_str().unwrap().to_string()),
            "{r}"
        );
    }
}

#[test]
fn a_method_from_a_proto_file_with_imports_reaches_a_python_server() {
    let server = PyGrpc::start("proto", &[]);
    let r = run(&[
        &server.url(),
        "--proto",
        &orders_proto(),
        "--import-path",
        PROTO_ROOT,
        "--call",
        CREATE,
        "--data",
        DATA,
        "-s",
        "round-robin:2",
        "-c",
        "4",
        "-z",
        "700ms",
    ]);
    let cell = &r["cells"][0];
    assert_eq!(cell["errors"]["total"], 0, "{}", cell["errors"]);
    check_seen(&server.seen(), cell["requests"].as_u64().unwrap());
    assert_eq!(r["config"]["target_options"]["grpc"]["call"], CREATE);
}

#[test]
fn reflection_finds_the_method_and_its_imports() {
    let server = PyGrpc::start("reflect", &["--reflection"]);
    let r = run(&[
        &server.url(),
        "--call",
        "shop.v1.Orders.Create",
        "--data",
        DATA,
        "-s",
        "pool:2",
        "-c",
        "2",
        "-z",
        "700ms",
    ]);
    let cell = &r["cells"][0];
    assert_eq!(cell["errors"]["total"], 0, "{}", cell["errors"]);
    check_seen(&server.seen(), cell["requests"].as_u64().unwrap());
}

#[test]
fn statuses_other_than_ok_are_counted_by_code() {
    let server = PyGrpc::start("status", &["--fail-item", "2"]);
    let r = run(&[
        &server.url(),
        "--proto",
        &orders_proto(),
        "--import-path",
        PROTO_ROOT,
        "--call",
        CREATE,
        "--data",
        r#"{"item": {random:1..2}}"#,
        "-s",
        "pool:2",
        "-c",
        "2",
        "-z",
        "700ms",
    ]);
    let cell = &r["cells"][0];
    let errors = &cell["errors"];
    let not_found = errors["by_status"]["5"].as_u64().unwrap_or(0);
    assert!(not_found > 0, "{errors}");
    assert_eq!(errors["total"].as_u64().unwrap(), not_found, "{errors}");
    let requests = cell["requests"].as_u64().unwrap();
    assert!(requests > not_found, "no call succeeded: {errors}");
    let seen = server.seen();
    let failing = seen.iter().filter(|s| s["item"] == "2").count() as u64;
    assert!(
        failing >= not_found,
        "{failing} sent with item 2, {not_found} counted"
    );
}

#[test]
fn what_cannot_be_called_is_refused_before_any_load() {
    let plain = PyGrpc::start("refuse", &[]);
    let proto = orders_proto();
    let p = |call: &str, more: &[&str]| -> Vec<String> {
        let mut v = vec![
            "--proto",
            &proto,
            "--import-path",
            PROTO_ROOT,
            "--call",
            call,
        ];
        v.extend_from_slice(more);
        v.into_iter().map(String::from).collect()
    };
    let own = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    let cases = [
        (own(&["--call", CREATE]), "offers no reflection"),
        (p("shop.v1.Orders/Watch", &[]), "server streaming"),
        (p("shop.v1.Nope/Create", &[]), "services: shop.v1.Orders"),
        (p("shop.v1.Orders/Nope", &[]), "methods: Create, Watch"),
        (
            p(CREATE, &["--data", r#"{"itm": 1}"#]),
            "shop.v1.CreateOrder",
        ),
        (own(&["--proto", &proto, "--call", CREATE]), "--import-path"),
        (
            own(&["--proto", "/nonexistent/x.proto", "--call", CREATE]),
            "cannot read --proto",
        ),
    ];
    for (args, mentions) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .arg("run")
            .arg(plain.url())
            .args(&args)
            .args(["-d", "1s"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(mentions),
            "{args:?}: {stderr} lacks {mentions}"
        );
    }
    assert!(plain.seen().is_empty(), "a refused run sent load");
}
