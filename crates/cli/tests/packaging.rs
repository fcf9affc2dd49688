//! `cargo install --locked --path crates/cli` builds the binary from its
//! crates alone: no crate compiles in a file from outside its own
//! directory (`include_str!`, `include_bytes!`), so the installed binary
//! runs `scenario list`, `tune` and `serve` with nothing else on disk.
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_crate_compiles_in_a_file_from_outside_itself() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut outside = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let krate = entry.unwrap().path().canonicalize().unwrap();
        let src = krate.join("src");
        if !src.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for include in ["include_str!(\"", "include_bytes!(\""] {
                for (i, _) in text.match_indices(include) {
                    let rest = &text[i + include.len()..];
                    let rel = &rest[..rest.find('"').unwrap()];
                    seen += 1;
                    let target = file.parent().unwrap().join(rel).canonicalize();
                    match target {
                        Ok(t) if t.starts_with(&krate) => {}
                        _ => outside.push(format!("{}: {rel}", file.display())),
                    }
                }
            }
        }
    }
    assert!(
        seen >= 6,
        "the scenarios are compiled in: {seen} includes found"
    );
    assert!(
        outside.is_empty(),
        "outside their crate:\n{}",
        outside.join("\n")
    );
}
