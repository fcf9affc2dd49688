//! The sample outputs in README.md and docs/ have the shape of what the
//! code prints now. `scripts/samples.py` writes each block from a real run
//! and saves the run's result; its marker names the command that prints
//! the same from what was saved, with no load (`poolbench report
//! SAVED.json`, `poolbench compare A B`). Each block's lines must be lines
//! that command prints today, numbers aside, in order and without a gap
//! except where a line `…` says lines were left out.
use super::{name, pages, root};
use std::collections::BTreeMap;
use std::process::Command;

const MARK: &str = "<!-- sample ";
const AGAIN: &str = " (scripts/samples.py; again, with no load: poolbench ";
const SAVED: &str = "crates/cli/tests/fixtures/samples";

/// One sample block of a page.
struct Block {
    /// Where: the page and the marker's line.
    at: String,
    name: String,
    /// The arguments of `poolbench` that print it from what was saved.
    args: Vec<String>,
    body: Vec<String>,
}

/// Every sample block of `text`, or what is wrong with one.
fn blocks_of(at: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix(MARK) else {
            continue;
        };
        let at = format!("{at}:{}", i + 1);
        let (id, tail) = rest
            .split_once(AGAIN)
            .ok_or(format!("{at}: a marker without `{AGAIN}`"))?;
        let args = tail
            .strip_suffix(") -->")
            .ok_or(format!("{at}: the marker does not end in `) -->`"))?;
        let name = id.split_once('/').ok_or(format!("{at}: no NAME/VIEW"))?.0;
        if lines.get(i + 1) != Some(&"```") {
            return Err(format!("{at}: the marker is not followed by a fence"));
        }
        let end = (i + 2..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .ok_or(format!("{at}: the fence does not close"))?;
        if lines.get(end + 1) != Some(&"<!-- /sample -->") {
            return Err(format!("{at}: no `<!-- /sample -->` after the block"));
        }
        out.push(Block {
            at,
            name: name.to_string(),
            args: args.split_whitespace().map(String::from).collect(),
            body: lines[i + 2..end].iter().map(|l| l.to_string()).collect(),
        });
    }
    Ok(out)
}

fn blocks() -> Vec<Block> {
    let mut all = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        all.extend(blocks_of(&name(&page), &text).unwrap_or_else(|e| panic!("{e}")));
    }
    all
}

/// A line's shape: every number (digits, with `,` or `.` inside) one `#`,
/// every run of spaces one space, none at the ends. The labels, the
/// words and the columns stay.
fn shape(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || ((chars[i] == ',' || chars[i] == '.')
                        && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())))
            {
                i += 1;
            }
            out.push('#');
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out.trim().to_string()
}

fn is_cut(line: &str) -> bool {
    line.trim() == "…"
}

/// Whether `doc` (a block's lines) has the shape of `printed`: its runs
/// between `…` lines are runs of `printed`, in order; the first at the
/// start and the last at the end unless a `…` stands there. Else the
/// first line that is not printed so, with the line printed instead.
fn same_shape(doc: &[String], printed: &[String]) -> Result<(), String> {
    let printed: Vec<String> = printed.iter().map(|l| shape(l)).collect();
    let first = printed.iter().position(|l| !l.is_empty()).unwrap_or(0);
    let last = printed
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    let printed = &printed[first..last];
    let runs: Vec<Vec<String>> = doc
        .split(|l| is_cut(l))
        .map(|run| run.iter().map(|l| shape(l)).collect())
        .collect();
    let mut from = 0;
    for (k, run) in runs.iter().enumerate() {
        if run.is_empty() {
            continue;
        }
        let anchored = k == 0;
        let starts: Vec<usize> = match anchored {
            true => vec![0],
            false => (from..printed.len()).collect(),
        };
        // The start matching most of the run, and how much.
        let (at, len) = starts
            .iter()
            .map(|&s| {
                let n = run
                    .iter()
                    .zip(&printed[s.min(printed.len())..])
                    .take_while(|(a, b)| a == b)
                    .count();
                (s, n)
            })
            .max_by_key(|&(s, n)| (n, std::cmp::Reverse(s)))
            .unwrap_or((from, 0));
        if len < run.len() {
            let now = printed.get(at + len).map_or("(nothing)", |s| s.as_str());
            return Err(format!(
                "the block's line `{}` is not printed so now; at that place the command prints `{now}`",
                run[len]
            ));
        }
        from = at + len;
        if k == runs.len() - 1 && from != printed.len() {
            return Err(format!(
                "the block ends at `{}`, but the command prints more after it (`{}`): end it with a line `…` or write it again",
                run[run.len() - 1],
                printed[from]
            ));
        }
    }
    Ok(())
}

/// What `poolbench args` prints now.
fn printed(args: &[String]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("poolbench runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "poolbench {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Each object key of `now` that `saved` lacks, by its path.
fn missing_keys(
    saved: &serde_json::Value,
    now: &serde_json::Value,
    path: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    match (saved, now) {
        (Value::Object(s), Value::Object(n)) => {
            for (k, v) in n {
                match s.get(k) {
                    None => out.push(format!("{path}.{k}")),
                    Some(sv) => missing_keys(sv, v, &format!("{path}.{k}"), out),
                }
            }
        }
        (Value::Array(s), Value::Array(n)) => {
            for (i, (sv, nv)) in s.iter().zip(n).enumerate() {
                missing_keys(sv, nv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_sample_has_the_shape_the_code_prints_now() {
    let blocks = blocks();
    assert!(blocks.len() >= 9, "only {} sample blocks", blocks.len());
    let mut by_args: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut drifted = Vec::new();
    for b in &blocks {
        let now = by_args
            .entry(b.args.clone())
            .or_insert_with(|| printed(&b.args));
        if let Err(e) = same_shape(&b.body, now) {
            drifted.push(format!("{} ({}): {e}", b.at, b.name));
        }
    }
    assert!(
        drifted.is_empty(),
        "samples that are not what the code prints now (scripts/samples.py --rerender writes them from the saved results, scripts/samples.py NAME runs them again):\n{}",
        drifted.join("\n")
    );
}

/// Each saved result a block is printed from holds every field this
/// version writes (else its sample predates them: run it again), and
/// every saved result is shown by a block.
#[test]
fn every_saved_sample_is_current_and_shown() {
    let blocks = blocks();
    let mut stale = Vec::new();
    let mut shown = Vec::new();
    for b in &blocks {
        let [cmd, file] = &b.args[..] else { continue };
        if cmd != "report" || shown.contains(file) {
            continue;
        }
        shown.push(file.clone());
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root().join(file)).unwrap()).unwrap();
        let args = [
            "report".to_string(),
            file.clone(),
            "--format".into(),
            "json".into(),
        ];
        let now: serde_json::Value = serde_json::from_str(&printed(&args).join("\n")).unwrap();
        let mut missing = Vec::new();
        missing_keys(&saved, &now, "", &mut missing);
        if !missing.is_empty() {
            stale.push(format!(
                "{file} (scripts/samples.py {}): {}",
                b.name,
                missing.join(", ")
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "saved samples older than the fields this version writes:\n{}",
        stale.join("\n")
    );
    for e in std::fs::read_dir(root().join(SAVED)).unwrap() {
        let file = format!("{SAVED}/{}", e.unwrap().file_name().to_string_lossy());
        assert!(shown.contains(&file), "{file}: no sample block shows it");
    }
}

#[test]
fn a_shape_keeps_words_and_columns_and_drops_numbers() {
    assert_eq!(
        shape("  in flight       req/s   ±95%  fitted   p99"),
        "in flight req/s ±#% fitted p#"
    );
    assert_eq!(
        shape("         25       1,116    ±3%    40.4 ms"),
        "# # ±#% # ms"
    );
    let printed: Vec<String> = ["a 1", "b 2", "c 3", "d 4"].map(String::from).to_vec();
    let doc = |ls: &[&str]| ls.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(same_shape(&doc(&["a 9", "…", "c 1", "d 2"]), &printed).is_ok());
    assert!(same_shape(&doc(&["a 9", "…"]), &printed).is_ok());
    assert!(same_shape(&doc(&["…", "b 0", "…"]), &printed).is_ok());
    assert!(
        same_shape(&doc(&["a 9", "c 1", "…"]), &printed).is_err(),
        "a gap without …"
    );
    assert!(
        same_shape(&doc(&["a 9", "b 1"]), &printed).is_err(),
        "an end without …"
    );
    assert!(
        same_shape(&doc(&["b 1", "…"]), &printed).is_err(),
        "a start without …"
    );
    assert!(
        same_shape(&doc(&["a 1", "…", "x 3"]), &printed).is_err(),
        "a renamed line"
    );
}
