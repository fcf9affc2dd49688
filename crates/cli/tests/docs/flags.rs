//! The flags of each command against its pages: every long flag its
//! `--help` prints is on the command's pages, and every `--flag` a page
//! writes exists in the help of a command that page documents.
use super::{name, pages, root};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each command, the pages that hold every flag of it (the first its own
/// page), and the other pages whose flags may be its.
const COMMANDS: &[(&str, &[&str], &[&str])] = &[
    (
        "run",
        &["docs/run.md"],
        &[
            "docs/targets.md",
            "docs/scenarios.md",
            "docs/distributed.md",
            "docs/metrics.md",
            "docs/reports.md",
            "docs/tune.md",
            "docs/faults.md",
            "docs/figures.md",
        ],
    ),
    // `run`'s target and request options, with the same meaning.
    (
        "tune",
        &["docs/tune.md"],
        &[
            "docs/capacity-in-ci.md",
            "docs/metrics.md",
            "docs/targets.md",
        ],
    ),
    // No page of its own: the README's list of its knobs, the check of a
    // client, the service mode, live metrics.
    (
        "serve",
        &[
            "README.md",
            "docs/check-client.md",
            "docs/targets.md",
            "docs/metrics.md",
        ],
        &[],
    ),
    ("census", &["docs/census.md"], &[]),
    ("report", &["docs/reports.md"], &[]),
    ("compare", &["docs/reports.md"], &["docs/capacity-in-ci.md"]),
    ("merge", &["docs/reports.md"], &["docs/distributed.md"]),
    ("schema", &["docs/reports.md"], &[]),
    ("explain", &["docs/findings.md"], &[]),
    ("scenario list", &["docs/scenarios.md"], &[]),
    ("scenario show", &["docs/scenarios.md"], &[]),
    ("scenario run", &["docs/scenarios.md"], &["docs/metrics.md"]),
];

/// Pages that speak of every command (a flag there exists in one of
/// them): the README, the glossary, tuning your own service, the findings
/// (each names what to change), the layout.
const EVERY_COMMAND: &[&str] = &[
    "README.md",
    "docs/glossary.md",
    "docs/tune-your-service.md",
    "docs/findings.md",
    "docs/ARCHITECTURE.md",
    "docs/development.md",
];

/// Flags of other tools, each allowed only in a paragraph naming its tool.
const PEERS: &[(&str, &str)] = &[
    ("--limit", "aiohttp"),
    ("--runs", "tune-accuracy.sh"),
    ("--report-time", "libtest"),
    ("--locked", "cargo"),
    ("--workspace", "cargo"),
    ("--no-deps", "cargo"),
    ("--architecture", "check-layout.py"),
];

/// A code span or line starting with one of these is another tool's
/// command line, and its flags are that tool's.
const TOOLS: &[&str] = &[
    "wrk",
    "wrk2",
    "vegeta",
    "oha",
    "hey",
    "h2load",
    "ghz",
    "pgbench",
    "redis-benchmark",
    "mariadb-slap",
    "mysqlslap",
    "cargo",
    "curl",
    "kubectl",
    "promtool",
    "psql",
    "docker",
    "python3",
    "go",
];

/// A command's long flags (with the short form, if it has one), from its
/// `--help`.
fn help_flags(command: &str) -> Vec<(String, Option<String>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(command.split(' '))
        .arg("--help")
        .output()
        .expect("poolbench runs");
    assert!(out.status.success(), "poolbench {command} --help");
    let mut flags = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let l = line.trim_start();
        // An option's line, indented less than its description:
        // `-o, --output <FILE>` or `--rate <RATE>`.
        if line.len() - l.len() > 6 {
            continue;
        }
        let (short, rest) = match l.split_once(", --") {
            Some((s, r)) if s.len() == 2 && s.starts_with('-') => (Some(s.to_string()), r),
            _ => match l.strip_prefix("--") {
                Some(r) => (None, r),
                None => continue,
            },
        };
        let long: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !["help", "version"].contains(&long.as_str()) {
            flags.push((format!("--{long}"), short));
        }
    }
    flags
}

/// `flag` is written in `text` as a whole word (`--rate`, not `--rate-x`).
fn written(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + flag.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[test]
fn every_flag_of_a_command_is_on_its_pages() {
    let root = root();
    let mut missing = Vec::new();
    for (command, own, _) in COMMANDS {
        let text: String = own
            .iter()
            .map(|p| std::fs::read_to_string(root.join(p)).unwrap())
            .collect();
        for (long, short) in help_flags(command) {
            let found = written(&text, &long) || short.as_ref().is_some_and(|s| written(&text, s));
            if !found {
                missing.push(format!(
                    "poolbench {command} {long}: not on {}",
                    own.join(", ")
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags the docs do not describe:\n{}",
        missing.join("\n")
    );
}

/// A `--flag` of a page, with what its context says of whose it is.
struct Written {
    line: usize,
    flag: String,
    /// The command a `poolbench CMD …` (or `CMD …`) around it names.
    command: Option<String>,
    /// Its paragraph, to find a peer's name in.
    paragraph: String,
}

/// The first word of `code`, if it is a command's name: `poolbench run
/// …`, `run …`, `scenario run …` say whose its flags are.
fn command_of(code: &str) -> Option<String> {
    let mut words = code.split_whitespace();
    let mut first = words.next()?;
    if first == "poolbench" {
        first = words.next()?;
    }
    COMMANDS
        .iter()
        .map(|(c, _, _)| c.split(' ').next().unwrap())
        .find(|c| *c == first)
        .map(String::from)
}

/// Whether `code` is another tool's command line.
fn other_tool(code: &str) -> bool {
    let first = code.split_whitespace().next().unwrap_or("");
    TOOLS.contains(&first) || first.starts_with("bench/") || first.starts_with("scripts/")
}

/// The `--flag`s in `s`.
fn flags_in(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in s.match_indices("--") {
        let before = s[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = s[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push(format!("--{name}"));
        }
    }
    out
}

/// Every `--flag` of a page: in its code spans, prose and the command
/// lines of its fenced blocks (other lines of those are output).
fn written_flags(text: &str) -> Vec<Written> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut fence_command: Option<String> = None;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            fence_command = None;
            i += 1;
            continue;
        }
        if fenced {
            // A command line, or the continuation of one (`\` at the end).
            let from = line.find("poolbench ").map(|p| &line[p..]);
            let command = from.and_then(command_of).or(fence_command.take());
            if let Some(c) = &command {
                let part = from.unwrap_or(line);
                for flag in flags_in(part) {
                    out.push(Written {
                        line: i + 1,
                        flag,
                        command: Some(c.clone()),
                        paragraph: line.to_string(),
                    });
                }
                if line.trim_end().ends_with('\\') {
                    fence_command = command;
                }
            }
            i += 1;
            continue;
        }
        // A paragraph: lines up to a blank one or a fence.
        let start = i;
        while i < lines.len()
            && !lines[i].trim().is_empty()
            && !lines[i].trim_start().starts_with("```")
        {
            i += 1;
        }
        if i == start {
            i += 1;
            continue;
        }
        let paragraph = lines[start..i].join("\n");
        let parts: Vec<&str> = paragraph.split('`').collect();
        let mut offset = 0;
        for (k, part) in parts.iter().enumerate() {
            let line = start + 1 + paragraph[..offset].matches('\n').count();
            offset += part.len() + 1;
            let code = k % 2 == 1 && k + 1 < parts.len();
            if code && other_tool(part) {
                continue;
            }
            let command = if code { command_of(part) } else { None };
            for flag in flags_in(part) {
                out.push(Written {
                    line,
                    flag,
                    command: command.clone(),
                    paragraph: paragraph.clone(),
                });
            }
        }
    }
    out
}

#[test]
fn every_flag_on_a_page_exists() {
    let mut helps: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (command, _, _) in COMMANDS {
        let top = command.split(' ').next().unwrap();
        let flags = helps.entry(top).or_default();
        flags.extend(help_flags(command).into_iter().map(|(l, _)| l));
        flags.extend(["--help".to_string(), "--version".to_string()]);
    }
    let all: BTreeSet<String> = helps.values().flatten().cloned().collect();
    let mut unknown = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let rel = name(&page);
        let documented: BTreeSet<String> = match EVERY_COMMAND.contains(&rel.as_str()) {
            true => all.clone(),
            false => COMMANDS
                .iter()
                .filter(|(_, own, others)| {
                    own.contains(&rel.as_str()) || others.contains(&rel.as_str())
                })
                .flat_map(|(c, _, _)| helps[c.split(' ').next().unwrap()].iter().cloned())
                .collect(),
        };
        let text = std::fs::read_to_string(&page).unwrap();
        for w in written_flags(&text) {
            checked += 1;
            let known = match &w.command {
                Some(c) => helps[c.as_str()].contains(&w.flag),
                None => documented.contains(&w.flag),
            };
            let peer = PEERS
                .iter()
                .any(|(f, tool)| *f == w.flag && w.paragraph.contains(tool));
            if !known && !peer {
                let whose = w
                    .command
                    .as_ref()
                    .map_or(String::from("the commands it documents"), |c| {
                        format!("poolbench {c}")
                    });
                unknown.push(format!(
                    "{rel}:{}: {} (not a flag of {whose})",
                    w.line, w.flag
                ));
            }
        }
    }
    assert!(checked > 300, "only {checked} flags found");
    assert!(
        unknown.is_empty(),
        "flags on the pages that the commands do not have:\n{}",
        unknown.join("\n")
    );
}
