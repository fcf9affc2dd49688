//! The documentation's links: every relative link in README.md and docs/
//! names a file that exists (and, with `#anchor`, a heading in it).
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `[text](target)` targets in `text`, code spans and fenced blocks left out.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans: a link inside backticks is an example.
        let plain: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect();
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces to dashes, most
/// punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| anchor(h.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_link_in_the_readme_and_docs_resolves() {
    let root = root();
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "md") {
            pages.push(p);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, frag) = link.split_once('#').unwrap_or((&link, ""));
            let target = match file {
                "" => page.clone(),
                f => page.parent().unwrap().join(f),
            };
            checked += 1;
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
                continue;
            }
            let md = target.extension().is_some_and(|e| e == "md");
            if !frag.is_empty() && md {
                let there = std::fs::read_to_string(&target).unwrap();
                if !anchors(&there).iter().any(|a| a == frag) {
                    broken.push(format!("{}: {link} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The project's Python script `script` (from the root) exits 0 with `arg`.
fn passes(script: &str, arg: &str) {
    let out = std::process::Command::new("python3")
        .arg(root().join(script))
        .arg(arg)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{script} {arg}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README quotes the figures each bench script kept last
/// (`bench/results/`), as `scripts/figures.py` writes them.
#[test]
fn the_readme_quotes_the_current_figures() {
    passes("scripts/figures.py", "--check");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let results = std::fs::read_dir(root().join("bench/results"))
        .unwrap()
        .count();
    assert!(results > 0, "bench/results holds no result");
    let quoted = readme.matches("](bench/results/").count();
    assert_eq!(quoted, results, "one quote per result file");
}

/// docs/ARCHITECTURE.md draws the crate graph cargo builds: every edge of
/// its drawing and every row of its table (scripts/check-layout.py).
#[test]
fn the_architecture_page_draws_the_crates_cargo_builds() {
    passes("scripts/check-layout.py", "--architecture");
}

/// The benches' history views are what bench/history.py renders from
/// its rows (bench/history/*.jsonl), and every row is whole.
#[test]
fn the_bench_history_views_are_rendered_from_its_rows() {
    passes("bench/history.py", "check");
    let dir = root().join("bench/history");
    let mut rows = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let row: serde_json::Value = serde_json::from_str(line).unwrap();
                for key in ["bench", "command", "date", "commit", "machine"] {
                    assert!(row[key].is_string(), "{}: no {key}", path.display());
                }
                assert!(row["figures"].is_array() && row["output"].is_array());
                rows += 1;
            }
        }
    }
    assert!(rows > 0, "no bench history");
}
