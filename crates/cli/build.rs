//! Stamps the commit the binary was built from into `poolbench --version`
//! (`POOLBENCH_COMMIT`): the checkout's `git rev-parse HEAD` (changes not
//! committed are not marked), or `unknown` outside a git checkout (a source
//! tarball). `POOLBENCH_COMMIT` set in the environment wins.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=POOLBENCH_COMMIT");
    let commit = std::env::var("POOLBENCH_COMMIT").ok().or_else(|| {
        let head = git(&["rev-parse", "--short=12", "HEAD"])?;
        // Rebuilt when HEAD moves: its file, the branch it names, packed refs.
        for path in ["HEAD", "packed-refs"] {
            if let Some(p) = git(&["rev-parse", "--git-path", path]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            if let Some(p) = git(&["rev-parse", "--git-path", &branch]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
        Some(head)
    });
    println!(
        "cargo:rustc-env=POOLBENCH_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".into())
    );
}
