//! The documentation against the code: every relative link in README.md
//! and docs/ names a file that exists (and, with `#anchor`, a heading in
//! it), every backticked path exists, the layout names every script, the
//! flags of each command are on its page (`flags`), and every sample
//! output has the shape the code prints now (`samples`).
use std::path::{Path, PathBuf};

mod flags;
mod samples;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The page's name from the root, for messages.
fn name(page: &Path) -> String {
    page.strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string()
}

/// The lines of `text` outside fenced blocks (and not their fences).
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            let fence = line.trim_start().starts_with("```");
            fenced ^= fence;
            !fence && !fenced
        })
        .collect()
}

/// The code spans of `text` outside fenced blocks: `like this`.
fn code_spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let parts: Vec<&str> = line.split('`').collect();
        // An odd part is inside a span when the span closes on this line.
        for (i, part) in parts.iter().enumerate() {
            if i % 2 == 1 && i + 1 < parts.len() {
                out.push(part.to_string());
            }
        }
    }
    out
}

/// `[text](target)` targets in `text`, code spans and fenced blocks left out.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
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
    let pages = pages();
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

/// Where a backticked path may start: the repository's top-level folders.
const TOP_DIRS: &[&str] = &[
    "crates/", "docs/", "bench/", "scripts/", "deploy/", "fuzz/", ".ci/",
];

/// Every file under `dir`, recursively (hidden folders and target/ left out).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let hidden = e.file_name().to_string_lossy().starts_with('.');
        if p.is_dir() && !hidden && e.file_name() != "target" {
            walk(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

/// `name` matches `pattern`, whose `*` stands for any run of characters.
fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.is_char_boundary(i) && glob_match(tail, &name[i..]))
        }
    }
}

/// A path `root`/`path` exists. Written with a placeholder as its last
/// part (`NAME.md`, `<id>.rs`) its folder must exist; with a glob
/// (`vs-*.sh`) a file in its folder must match.
fn exists_written(root: &Path, path: &str) -> bool {
    let (dir, last) = path
        .trim_end_matches('/')
        .rsplit_once('/')
        .unwrap_or(("", path));
    let stem = last.split('.').next().unwrap_or(last);
    let placeholder = last.contains('<') || ["NAME", "FILE", "DIR", "ID"].contains(&stem);
    let folder = root.join(dir);
    if last.contains('*') {
        return std::fs::read_dir(&folder).is_ok_and(|mut es| {
            es.any(|e| e.is_ok_and(|e| glob_match(last, &e.file_name().to_string_lossy())))
        });
    }
    root.join(path).exists() || (placeholder && folder.is_dir())
}

/// The repository path a code span's word names, if it names one: from
/// the root (a top-level folder), from `crates/` (`cli/src/saved.rs`), a
/// crate's tests (`tests/turns.rs`), a source file or folder within a
/// crate (`http1/wire.rs`, `record.rs`, `searcher/`), or a bench or
/// script file by its name alone (`vs-wrk.sh`). `Some(found)`; `None` for
/// any other word. `files`: every file's path from the root, after a `/`.
fn repo_path(root: &Path, word: &str, files: &[String]) -> Option<bool> {
    let word = word
        .trim_start_matches('(')
        .trim_end_matches(['.', ',', ';', ':', ')']);
    let word = word.split_once('#').map_or(word, |(p, _)| p);
    if word.contains("://") || word.starts_with('/') {
        return None;
    }
    if TOP_DIRS.iter().any(|d| word.starts_with(d)) {
        return Some(exists_written(root, word));
    }
    let crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    if let Some((first, rest)) = word.split_once('/') {
        if crates.iter().any(|c| c == first)
            && (rest.starts_with("src/") || rest.starts_with("tests/"))
        {
            return Some(exists_written(&root.join("crates"), word));
        }
        if first == "tests" {
            return Some(
                crates
                    .iter()
                    .any(|c| exists_written(&root.join("crates").join(c), word)),
            );
        }
    }
    let lower = word.starts_with(|c: char| c.is_ascii_lowercase());
    let file = [".rs", ".sh", ".py"].iter().any(|x| word.ends_with(x));
    let folder = word.ends_with('/') && !word.contains('.');
    match (lower && (file || folder), folder) {
        (false, _) => None,
        (true, false) => Some(files.iter().any(|f| f.ends_with(&format!("/{word}")))),
        (true, true) => Some(files.iter().any(|f| f.contains(&format!("/{word}")))),
    }
}

/// Every backticked path in README.md and docs/ that names a file or
/// folder of the repository exists (a moved file is named where it is).
#[test]
fn every_backticked_path_exists() {
    let root = root();
    let mut found = Vec::new();
    for dir in ["bench", "scripts", "deploy", "crates", "fuzz"] {
        walk(&root.join(dir), &mut found);
    }
    let files: Vec<String> = found
        .iter()
        .map(|p| format!("/{}", p.strip_prefix(&root).unwrap().display()))
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for span in code_spans(&text) {
            for word in span.split_whitespace() {
                match repo_path(&root, word, &files) {
                    Some(true) => checked += 1,
                    Some(false) => missing.push(format!("{}: `{word}` (in `{span}`)", name(&page))),
                    None => {}
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} paths found");
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The layout in docs/development.md names every bench script and helper
/// and every script (`bench/*.sh`, `bench/*.py`, `scripts/*`), by name or
/// in a glob it writes.
#[test]
fn the_layout_names_every_script() {
    let root = root();
    let page = std::fs::read_to_string(root.join("docs/development.md")).unwrap();
    let layout = page.split("## Layout").nth(1).expect("a Layout section");
    let words: Vec<&str> = layout
        .split(|c: char| c.is_whitespace() || "(),;:`".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut unnamed = Vec::new();
    for (dir, keep) in [("bench", &["sh", "py"][..]), ("scripts", &[][..])] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let kept =
                keep.is_empty() || p.extension().is_some_and(|x| keep.iter().any(|k| x == *k));
            if p.is_file() && kept && !words.iter().any(|w| glob_match(w, &file)) {
                unnamed.push(format!("{dir}/{file}"));
            }
        }
    }
    assert!(
        unnamed.is_empty(),
        "docs/development.md's layout does not name:\n{}",
        unnamed.join("\n")
    );
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
