//! A real headless Chromium for the HTML reports (scripts/setup.sh
//! installs it from the OS packages): the page rendered offline, its DOM
//! or a screenshot.
use std::path::Path;
use std::process::Command;

fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new("which")
                .arg(b)
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("Chromium is not installed: run scripts/setup.sh")
}

pub fn headless(file: &Path, extra: &[String]) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
        ])
        .args(extra)
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The DOM Chromium built from `file`, after checking nothing failed to
/// load and no script error was logged.
pub fn dump_dom(file: &Path) -> String {
    let (dom, log) = headless(file, &["--dump-dom".to_string()]);
    assert!(
        !log.contains("Uncaught") && !log.contains("net::ERR_"),
        "{log}"
    );
    dom
}
