//! The HTML report in a real browser: Chromium (scripts/setup.sh installs
//! it from the OS packages) renders the file offline, headless; every
//! chart drew its lines, nothing failed to load, and a screenshot is kept in
//! the test's temp dir. `poolbench report` renders a saved JSON again, the
//! same page.
use crate::browser::headless;
use crate::turns::ONE_AT_A_TIME;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_html_report_draws_every_chart_in_chromium() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir: PathBuf = std::env::temp_dir().join(format!("poolbench-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("report.html");
    let json = dir.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args([
            "run",
            "-s",
            "pool:2,shared",
            "-c",
            "1,4",
            "-d",
            "300ms",
            "--warmup",
            "0s",
        ])
        .args(["--quiet", "-o"])
        .arg(&html)
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Nothing failed to load, no script error (dump_dom checks the log).
    let dom = crate::browser::dump_dom(&html);
    // Four scaling charts, and per cell a timeline and a latency spectrum,
    // each with its lines.
    let charts = dom.matches("<svg class=\"chart").count();
    assert_eq!(charts, 4 + 4 + 4, "{charts} charts");
    let lines = dom.matches("<polyline").count();
    assert_eq!(
        lines,
        4 * 2 + 4 + 4,
        "{lines} lines: two strategies × four charts, four timelines, four spectra"
    );
    // Each spectrum reaches p99.99 (log scale of 1/(1-p)) with many points.
    assert_eq!(dom.matches("<svg class=\"chart spectrum\"").count(), 4);
    assert_eq!(dom.matches(">p99.99</text>").count(), 4);
    for part in dom.split("data-points=\"").skip(1) {
        let n: usize = part.split('"').next().unwrap().parse().unwrap();
        assert!(n >= 20, "a spectrum of {n} points");
    }
    assert!(!dom.contains("points=\"\""), "a line without points");
    assert!(dom.contains("Recommendation") || dom.contains("No recommendation"));

    let shot = dir.join("report.png");
    headless(
        &html,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,1800".to_string(),
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );

    // The saved JSON renders to the same page.
    let again = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["report", "--format", "html"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(again.stdout, std::fs::read(&html).unwrap());

    // And as Markdown: a comparison per concurrency and the pool grid.
    let md = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["report", "--format", "markdown"])
        .arg(&json)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### c=4") && md.contains("| strategy | req/s |"),
        "{md}"
    );
    assert!(
        md.contains("| pool:2 |") && md.contains("by pool size × concurrency"),
        "{md}"
    );
}

#[test]
fn an_output_with_an_unknown_extension_is_refused_before_any_load() {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", "-o", "/tmp/result.xlsx", "-d", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains(".json, .html, .csv, .md, .txt or .xml (JUnit)"));
}
