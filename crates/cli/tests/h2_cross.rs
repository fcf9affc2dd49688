//! The lean HTTP/2 client against the h2 crate's (`--h2-client h2`), on
//! the same built-in server: both complete every request, the server counts
//! what each says it sent, and both survive a server that closes every
//! connection after 50 requests (GOAWAY) without errors.
use crate::services::{run_json, Serve};
use serde_json::Value;

fn cell(server: &Serve, client: &str) -> Value {
    let url = server.url("/").replace("http://", "h2c://");
    let r = run_json(&[
        "run",
        &url,
        "-s",
        "round-robin:2",
        "-c",
        "8",
        // 400 requests, not a 700 ms window: how many a window holds is
        // the machine's speed. The 20 s is a hang guard.
        "-n",
        "400",
        "-d",
        "20s",
        "--warmup",
        "0s",
        "--h2-client",
        client,
    ]);
    r["cells"][0].clone()
}

fn agree(server: &Serve) {
    for client in ["lean", "h2"] {
        let c = cell(server, client);
        let ok = c["ok"].as_u64().unwrap();
        assert!(ok > 100, "{client}: {ok} ok");
        assert_eq!(c["errors"]["total"], 0, "{client}: {}", c["errors"]);
        // The server saw at least what was measured (warm-up and the
        // requests cut at the end come on top).
        let seen = c["server"]["requests"].as_u64().unwrap();
        assert!(
            seen >= c["requests"].as_u64().unwrap(),
            "{client}: server saw {seen}: {c}"
        );
    }
}

#[test]
fn both_clients_agree_with_the_server() {
    agree(&Serve::start(&[]));
}

#[test]
fn both_clients_take_goaway_every_50_requests_without_errors() {
    agree(&Serve::start(&["--max-requests-per-conn", "50"]));
}
