//! `--metrics-listen`: a scrape mid-run passes `promtool check metrics`,
//! carries every cell as labels and keeps a finished cell's totals; the
//! built-in server's counters under `serve`; a bad or busy address stops
//! the command before any load (exit 2, one line); and the Grafana
//! dashboard asks only for series a scrape really has.
use crate::live_metrics::{promtool, samples, scrape, Watched, BIN};
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// Scrapes `addr` every 100 ms until `ready` holds of one (within 20 s).
fn scrape_until(addr: &str, ready: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let text = scrape(addr);
        if ready(&text) {
            return text;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The value of `name` for the cell whose labels start with `cell`.
fn of_cell(text: &str, name: &str, cell: &str) -> f64 {
    let found: Vec<f64> = samples(text, name)
        .into_iter()
        .filter(|(l, _)| l.starts_with(cell))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(found.len(), 1, "{name} of {cell}: {found:?}");
    found[0]
}

#[test]
fn a_scrape_mid_run_passes_promtool_and_a_finished_cell_keeps_its_totals() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let run = Watched::start(&[
        "run",
        "-s",
        "pool:4,shared",
        "--rate",
        "300",
        "-d",
        "1500ms",
        "--warmup",
        "200ms",
        "--server-delay",
        "2ms",
        "--format",
        "json",
        "--quiet",
    ]);
    let pool = r#"strategy="pool:4",concurrency="1000",pool_size="4",shard="none""#;
    let shared = r#"strategy="shared",concurrency="1000",pool_size="none",shard="none""#;
    // The second cell running, with requests counted already.
    let mid = scrape_until(&run.metrics, |t| {
        samples(t, "poolbench_requests_total")
            .iter()
            .any(|(l, v)| l.starts_with(shared) && *v > 0.0)
    });
    let (code, said) = promtool(&mid);
    assert_eq!(code, 0, "promtool check metrics: {said}\n{mid}");
    assert_eq!(of_cell(&mid, "poolbench_cell_active", shared), 1.0);
    assert_eq!(of_cell(&mid, "poolbench_cell_active", pool), 0.0);
    assert!(
        of_cell(&mid, "poolbench_connections_open", shared) >= 1.0,
        "{mid}"
    );
    // Every series but the process's own carries a cell.
    for line in mid.lines().filter(|l| !l.starts_with('#')) {
        assert!(
            line.starts_with("poolbench_info{") || line.contains(",shard=\"none\""),
            "{line}"
        );
    }
    let later = scrape(&run.metrics);
    let json = run.json();
    let cells = json["cells"].as_array().unwrap();
    let requests = |s: &str| {
        cells.iter().find(|c| c["strategy"] == s).unwrap()["requests"]
            .as_f64()
            .unwrap()
    };
    // The finished cell: its final totals, exactly, in both scrapes.
    for text in [&mid, &later] {
        assert_eq!(
            of_cell(text, "poolbench_requests_total", pool),
            requests("pool:4")
        );
        let count = of_cell(text, "poolbench_request_duration_seconds_count", pool);
        let ok = cells[0]["ok"].as_f64().unwrap();
        assert_eq!(count, ok, "{text}");
        assert!(of_cell(text, "poolbench_send_lag_seconds_count", pool) > 0.0);
    }
    // The running one only grows, and never past its final total.
    let (a, b) = (
        of_cell(&mid, "poolbench_requests_total", shared),
        of_cell(&later, "poolbench_requests_total", shared),
    );
    assert!(a <= b && b <= requests("shared"), "{a} {b}");
}

#[test]
fn serve_exposes_the_servers_counters() {
    let mut serve = Watched::start(&["serve", "--listen", "127.0.0.1:0"]);
    let line = serve.stdout_line();
    let http = line.trim().strip_prefix("http ").unwrap().to_string();
    for _ in 0..5 {
        let (head, _) = crate::live_metrics::get(&http, "/");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    let text = scrape(&serve.metrics);
    let (code, said) = promtool(&text);
    assert_eq!(code, 0, "{said}\n{text}");
    let requests = samples(&text, "poolbench_server_requests_total");
    assert_eq!(requests, vec![(String::new(), 5.0)], "{text}");
    assert_eq!(
        samples(&text, "poolbench_server_connections_accepted_total")[0].1,
        5.0
    );
    let (head, _) = crate::live_metrics::get(&serve.metrics, "/elsewhere");
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
}

/// `poolbench ARGS` must stop at once with exit 2 and one line naming
/// the flag, having printed nothing on stdout.
fn refused(args: &[&str]) {
    let started = Instant::now();
    let out = Command::new(BIN).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--metrics-listen"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{args:?} made load first"
    );
}

#[test]
fn a_bad_or_busy_metrics_address_stops_before_any_load() {
    refused(&["run", "--metrics-listen", "nonsense", "-d", "1s"]);
    refused(&["run", "--metrics-listen", "127.0.0.1:99999", "-d", "1s"]);
    refused(&["tune", "-c", "4", "--metrics-listen", "localhost"]);
    // Not an address of this machine.
    refused(&["run", "--metrics-listen", "192.0.2.1:9464", "-d", "1s"]);
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    for command in [
        &["run", "-d", "5s"][..],
        &["tune", "-c", "4"],
        &["serve", "--listen", "127.0.0.1:0"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--metrics-listen", &addr]);
        refused(&args);
    }
    let out = Command::new(BIN)
        .args(["run", "--metrics-linger", "5s", "-d", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--metrics-linger alone");
}

/// The metric names a PromQL expression names.
fn names(expr: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("poolbench_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        found.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    found
}

#[test]
fn the_grafana_dashboard_asks_for_series_a_scrape_has() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/grafana/poolbench.json"
    );
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let run = Watched::start(&[
        "run",
        "-s",
        "pool:2",
        "-c",
        "4",
        "-d",
        "1s",
        "--warmup",
        "100ms",
        "--server-delay",
        "2ms",
        "--format",
        "json",
        "--quiet",
    ]);
    let text = scrape_until(&run.metrics, |t| {
        samples(t, "poolbench_requests_total")
            .iter()
            .any(|(_, v)| *v > 0.0)
    });
    drop(run);
    let exposed: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let panels = dashboard["panels"].as_array().expect("panels");
    let titles: Vec<&str> = panels.iter().filter_map(|p| p["title"].as_str()).collect();
    for want in ["Throughput", "p99", "Connections open", "Checkout wait"] {
        assert!(
            titles.iter().any(|t| t.contains(want)),
            "no {want} panel: {titles:?}"
        );
    }
    for panel in panels.iter().filter(|p| p["type"] != "row") {
        let title = &panel["title"];
        assert!(panel["datasource"].is_object(), "{title}: no datasource");
        let targets = panel["targets"].as_array().filter(|t| !t.is_empty());
        for target in targets.unwrap_or_else(|| panic!("{title}: no targets")) {
            let expr = target["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("{title}: no expr"));
            let named = names(expr);
            assert!(
                !named.is_empty(),
                "{title}: {expr} names no poolbench metric"
            );
            for n in named {
                assert!(exposed.contains(&n.as_str()), "{title}: {n} is not exposed");
            }
        }
    }
}

#[test]
fn a_scenarios_steps_keep_their_cells_in_one_endpoint() {
    let dir =
        std::env::temp_dir().join(format!("poolbench-metrics-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two.toml");
    let step = |title: &str, strategy: &str, c: u32| {
        format!(
            "[[step]]\ntitle = \"{title}\"\nserve = {{ delay = \"1ms\" }}\ntarget = \"http://{{http}}/\"\n\
             run = {{ strategies = [\"{strategy}\"], concurrency = [{c}], duration = \"400ms\", warmup = \"100ms\" }}\n\
             expect = {{ errors = false }}\n\n"
        )
    };
    let text = format!(
        "name = \"two\"\ntitle = \"two steps\"\nshows = \"\"\"\ntwo cells\n\"\"\"\n\n{}{}",
        step("one", "pool:2", 2),
        step("two", "pool:3", 3)
    );
    std::fs::write(&file, text).unwrap();
    let out = dir.join("r.json");
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let file_arg = file.to_string_lossy().to_string();
    let out_arg = out.to_string_lossy().to_string();
    let mut run = Watched::start(&[
        "scenario",
        "run",
        &file_arg,
        "--quiet",
        "-o",
        &out_arg,
        "--metrics-linger",
        "1500ms",
    ]);
    let cell = |s: &str, c: u32| format!(r#"strategy="{s}",concurrency="{c}",pool_size="{c}""#);
    let (one, two) = (cell("pool:2", 2), cell("pool:3", 3));
    // Both steps done (the endpoint lingers): both cells, neither active.
    let text = scrape_until(&run.metrics, |t| {
        let requests = samples(t, "poolbench_requests_total");
        let active = samples(t, "poolbench_cell_active");
        requests.len() == 2
            && requests.iter().all(|(_, v)| *v > 0.0)
            && active.iter().all(|(_, v)| *v == 0.0)
            && std::fs::metadata(dir.join("r.2.json")).is_ok()
    });
    let (code, said) = promtool(&text);
    assert_eq!(code, 0, "{said}\n{text}");
    assert!(run.wait().success(), "the scenario failed");
    for (labels, path) in [(&one, "r.json"), (&two, "r.2.json")] {
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(path)).unwrap()).unwrap();
        let json = result["cells"][0]["requests"].as_f64().unwrap();
        assert_eq!(
            of_cell(&text, "poolbench_requests_total", labels),
            json,
            "{path}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
