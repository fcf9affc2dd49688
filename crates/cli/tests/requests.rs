//! The request a user describes (method, headers, body, placeholders)
//! reaches a server written in Python, not only the built-in one.
use crate::support::{run, Recorder};
use serde_json::Value;

#[test]
fn a_post_with_headers_and_a_templated_body_reaches_a_python_server() {
    let server = Recorder::start("post");
    let r = run(&[
        &server.url("/items/{seq}"),
        "-m",
        "POST",
        "-H",
        "Authorization: Bearer t0k",
        "-H",
        "X-Req: {seq}",
        "-T",
        "application/json",
        "--body",
        r#"{"id": {random:1..1000000}, "seq": {seq}}"#,
        "-s",
        "pool:2",
        "-c",
        "2",
        "-z",
        "700ms",
    ]);
    let cell = &r["cells"][0];
    assert_eq!(cell["errors"]["total"], 0, "{}", cell["errors"]);
    let seen = server.seen();
    assert!(seen.len() >= 10, "only {} requests", seen.len());
    // The token reached the server, never the result.
    let json = r.to_string();
    assert!(!json.contains("t0k"), "the token leaked into the JSON");
    let headers = &r["config"]["target_options"]["http"]["headers"];
    assert_eq!(headers[0], "Authorization: ***", "{headers}");
    assert_eq!(headers[1], "X-Req: {seq}");
    let mut seqs = Vec::new();
    for req in &seen {
        assert_eq!(req["method"], "POST");
        let h = &req["headers"];
        assert_eq!(h["authorization"], "Bearer t0k");
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["host"], format!("127.0.0.1:{}", server.port));
        let path = req["path"].as_str().unwrap();
        let seq: u64 = path.strip_prefix("/items/").unwrap().parse().unwrap();
        // One number per request, the same in the path, a header and the body.
        assert_eq!(h["x-req"], seq.to_string());
        let body: Value = serde_json::from_str(req["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["seq"], seq);
        assert!((1..=1_000_000).contains(&body["id"].as_u64().unwrap()));
        seqs.push(seq);
    }
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), seen.len(), "every request its own number");
    let ids: std::collections::HashSet<_> = seen.iter().map(|r| r["body"].clone()).collect();
    assert_eq!(ids.len(), seen.len());
}

#[test]
fn head_and_a_host_override_and_a_body_file() {
    let server = Recorder::start("head");
    // HEAD: the answer's Content-Length announces a body that never comes.
    let r = run(&[
        &server.url("/h"),
        "-m",
        "HEAD",
        "--host",
        "api.example",
        "-s",
        "shared",
        "-c",
        "1",
        "-d",
        "300ms",
        "--timeout",
        "1s",
    ]);
    assert_eq!(r["cells"][0]["errors"]["total"], 0);
    let file = server.dir.join("body.json");
    std::fs::write(&file, "[1, 2, 3]").unwrap();
    run(&[
        &server.url("/f"),
        "-m",
        "PUT",
        "--body-file",
        file.to_str().unwrap(),
        "-s",
        "shared",
        "-c",
        "1",
        "-d",
        "200ms",
    ]);
    let seen = server.seen();
    let heads: Vec<_> = seen.iter().filter(|r| r["method"] == "HEAD").collect();
    let puts: Vec<_> = seen.iter().filter(|r| r["method"] == "PUT").collect();
    // Not one per timeout: HEAD answers were read whole at once.
    assert!(heads.len() > 20, "{} HEAD requests", heads.len());
    assert!(heads.iter().all(|r| r["headers"]["host"] == "api.example"));
    assert!(!puts.is_empty());
    assert!(puts.iter().all(|r| r["body"] == "[1, 2, 3]"));
}

#[test]
fn h2c_sends_the_method_templated_headers_and_bodies_beyond_the_flow_control_window() {
    let server = poolbench_server::EmbeddedServer::start(
        poolbench_server::ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..poolbench_server::ServerConfig::default()
        },
        1,
    )
    .unwrap();
    let url = format!("h2c://{}/p/{{seq}}", server.addr());
    let r = run(&[
        &url,
        "-m",
        "DELETE",
        "-H",
        "X-Req: {random:1..9}",
        "-s",
        "shared",
        "-c",
        "4",
        "-d",
        "300ms",
    ]);
    let cell = &r["cells"][0];
    assert_eq!(cell["errors"]["total"], 0, "{}", cell["errors"]);
    assert!(cell["requests"].as_u64().unwrap() > 10);
    // 100 KB bodies from 8 workers on one connection: far past the 64 KB
    // windows, so DATA waits for the server's WINDOW_UPDATEs; sent beyond
    // a window, the server would reset with FLOW_CONTROL_ERROR.
    let dir = std::env::temp_dir().join(format!("poolbench-h2body-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("body");
    std::fs::write(&file, vec![b'x'; 100_000]).unwrap();
    let r = run(&[
        &url,
        "-m",
        "POST",
        "--body-file",
        file.to_str().unwrap(),
        "-s",
        "shared",
        "-c",
        "8",
        "-d",
        "500ms",
        "--timeout",
        "2s",
    ]);
    let cell = &r["cells"][0];
    assert_eq!(cell["errors"]["total"], 0, "{}", cell["errors"]);
    assert!(cell["requests"].as_u64().unwrap() > 20, "{cell}");
    std::fs::remove_dir_all(&dir).unwrap();
}
