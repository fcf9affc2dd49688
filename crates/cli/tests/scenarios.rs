//! `poolbench scenario`: two built-in experiments run whole and meet their
//! expectations (shortened: shorter cells, same grids), a failed
//! expectation exits 1, and bad scenario files are refused with the line
//! and column. Whether every built-in scenario meets its expectations at
//! its own durations is a measurement of the machine, and
//! bench/scenarios.sh answers it (its latest result:
//! bench/results/scenarios.md).
/// The scenarios measure: one at a time, not beside each other or another
/// timed or heavy test.
use crate::turns::ONE_AT_A_TIME;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn file(name: &str, toml: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "poolbench-scenario-{name}-{}.toml",
        std::process::id()
    ));
    std::fs::write(&p, toml).unwrap();
    p
}

/// Runs a scenario file holding `toml` (quietly); its exit code and output.
fn run_toml(name: &str, toml: &str) -> (Option<i32>, String, String) {
    let path = file(name, toml);
    let out = bin()
        .args(["scenario", "run", "--quiet"])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let (stdout, stderr) = text(&out);
    (out.status.code(), stdout, stderr)
}

/// A scenario of one step titled "x", the step's other lines given.
fn one_step(step: &str) -> String {
    format!("name = \"t\"\ntitle = \"t\"\nshows = \"t\"\n\n[[step]]\ntitle = \"x\"\n{step}")
}

/// A built-in scenario's TOML (as `scenario show` prints it), its cells
/// shortened.
fn shortened(name: &str, shorter: &[(&str, &str)]) -> String {
    let out = bin().args(["scenario", "show", name]).output().unwrap();
    assert!(out.status.success());
    let mut toml = String::from_utf8(out.stdout).unwrap();
    for (from, to) in shorter {
        assert!(toml.contains(from), "{name} has no {from}");
        toml = toml.replace(from, to);
    }
    toml
}

fn passes(name: &str, shorter: &[(&str, &str)]) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (code, stdout, stderr) = run_toml(name, &shortened(name, shorter));
    assert!(
        code == Some(0),
        "{name}: {stderr}\n{}",
        stdout
            .lines()
            .filter(|l| l.contains("FAILED") || l.starts_with("==="))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(stdout.contains("What this shows"), "{stdout}");
    assert!(stdout.contains("Every expectation met."), "{stdout}");
    assert!(!stdout.contains("FAILED"), "{stdout}");
}

#[test]
fn slow_api_pools_passes_its_expectations() {
    passes(
        "slow-api-pools",
        &[("duration = \"2s\"", "duration = \"700ms\"")],
    );
}

#[test]
fn pool_size_grid_passes_its_expectations() {
    passes(
        "pool-size-grid",
        &[("duration = \"500ms\"", "duration = \"300ms\"")],
    );
}

#[test]
fn a_failed_expectation_exits_1_and_says_which() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The file's own output: written though an expectation failed.
    let saved = std::env::temp_dir().join(format!(
        "poolbench-scenario-out-{}.json",
        std::process::id()
    ));
    let toml = one_step(
        r#"serve = { delay = "1ms" }
target = "http://{http}/"
run = { strategies = ["pool:2"], concurrency = [2], duration = "300ms", warmup = "0s" }
expect = { errors = true, pitfall = ["stall"] }
"#,
    )
    .replacen(
        "\n\n[[step]]",
        &format!("\noutput = [{:?}]\n\n[[step]]", saved.display().to_string()),
        1,
    );
    let (code, stdout, stderr) = run_toml("fails", &toml);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&saved).expect("the scenario's output")).unwrap();
    let _ = std::fs::remove_file(&saved);
    assert_eq!(written["cells"][0]["strategy"], "pool:2");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stdout.contains("FAILED errors: true (measured: 0 failed)"),
        "{stdout}"
    );
    assert!(stdout.contains("FAILED finding stall named"), "{stdout}");
    assert!(stderr.contains("2 expectation(s) not met"), "{stderr}");
}

#[test]
fn scenarios_are_listed_shown_and_bad_ones_refused() {
    let out = bin().args(["scenario", "list"]).output().unwrap();
    let (list, _) = text(&out);
    for name in [
        "slow-api-pools",
        "grpc-client-concurrency",
        "db-pool-starvation",
        "db-pool-starvation-mysql",
        "pool-size-grid",
        "pooler-in-front",
        "http-client-sweep-pipelined",
    ] {
        assert!(list.contains(name), "{list}");
        // What `show` prints is the file under crates/cli/scenarios/.
        let shown = bin().args(["scenario", "show", name]).output().unwrap();
        let on_disk = std::fs::read(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml")),
        )
        .unwrap();
        assert_eq!(shown.stdout, on_disk, "{name}");
    }
    // An unknown key: refused with its line and column, before any load.
    let (code, _, stderr) = run_toml(
        "typo",
        &one_step("target = \"http://127.0.0.1:9/\"\nrun = { strategies = [\"pool:2\"], concurrensy = [2] }\n"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("line 8, column"), "{stderr}");
    assert!(stderr.contains("concurrensy"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    // An id no finding has (under the old key, `no_pitfall`): refused, not an expectation met by default.
    let (code, _, stderr) = run_toml(
        "pitfall",
        &one_step("target = \"http://127.0.0.1:9/\"\nexpect = { no_pitfall = [\"pool-bund\"] }\n"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("line 8, column"), "{stderr}");
    assert!(
        stderr.contains("unknown finding `pool-bund` (one of: batching-server,"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    // A bad run flag: refused naming the step.
    let (code, _, stderr) = run_toml(
        "flag",
        &one_step("target = \"http://127.0.0.1:9/\"\nrun = { strategies = [\"pool:zero\"] }\n"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("step 1 (x)"), "{stderr}");
    // No such scenario.
    let out = bin().args(["scenario", "run", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("built in are slow-api-pools"));
}

#[test]
fn a_scenario_needing_postgres_says_how_to_start_it() {
    let out = bin()
        .args(["scenario", "run", "db-pool-starvation"])
        .env_remove("POOLBENCH_PG_URL")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("scripts/scenario.sh db-pool-starvation"),
        "{stderr}"
    );
    let out = bin()
        .args(["scenario", "run", "db-pool-starvation-mysql"])
        .env_remove("POOLBENCH_MYSQL_URL")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("needs MySQL") && stderr.contains("POOLBENCH_MYSQL_URL"),
        "{stderr}"
    );
    // A step's database is true, "postgres" or "mysql".
    let (code, _, stderr) = run_toml(
        "db",
        &one_step("serve = { db = \"oracle\" }\ntarget = \"http://{http}/\"\nrun = { strategies = [\"pool:2\"] }\n"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("db = \"oracle\""), "{stderr}");
}

#[test]
fn a_step_ramps_through_its_stages() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (code, stdout, stderr) = run_toml(
        "stages",
        &one_step(
            r#"serve = { delay = "2ms" }
target = "http://{http}/"
run = { strategies = ["elastic:2+4"], concurrency = [2], stages = [{ to = 12, over = "1s" }, { to = 2, over = "1s" }], warmup = "200ms" }
expect = { errors = false }
"#,
        ),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("ramp of elastic:2+4 (concurrency), second by second"),
        "{stdout}"
    );
    assert!(stdout.contains("2.00 s per cell"), "{stdout}");
}

#[test]
fn ctrl_c_in_a_scenario_keeps_what_was_measured() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = std::env::temp_dir();
    let saved = dir.join(format!(
        "poolbench-scenario-int-{}.json",
        std::process::id()
    ));
    let two_steps = r#"name = "t"
title = "t"
shows = "t"

[[step]]
title = "first"
serve = { delay = "1ms" }
target = "http://{http}/"
run = { strategies = ["pool:2"], concurrency = [2], duration = "600ms", warmup = "0s" }

[[step]]
title = "second"
serve = { delay = "1ms" }
target = "http://{http}/"
run = { strategies = ["pool:2"], concurrency = [2], duration = "20s", warmup = "0s" }
"#;
    let path = file("interrupt", two_steps);
    let child = bin()
        .args(["scenario", "run", "--quiet", "-o"])
        .arg(&saved)
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Into the second step (its server starts in well under a second).
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    let (stdout, stderr) = text(&out);
    // One signal: the second step ends with what it measured, exit 130.
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let second = saved.with_file_name(format!(
        "poolbench-scenario-int-{}.2.json",
        std::process::id()
    ));
    for p in [&saved, &second] {
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        assert!(r["cells"][0]["ok"].as_u64().unwrap() > 0, "{}", p.display());
        let _ = std::fs::remove_file(p);
    }
    assert!(stdout.contains("=== step 2/2: second"), "{stdout}");
    assert!(stdout.contains("INTERRUPTED by SIGINT"), "{stdout}");
}

/// The processes whose parent is `pid`, from /proc.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                // pid (comm) state ppid …: comm may hold spaces.
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Gone, or a zombie nobody reaps (its parent has exited).
fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn a_second_ctrl_c_quits_at_once_and_stops_the_steps_server() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let path = file(
        "twice",
        &one_step(
            r#"serve = { delay = "1ms" }
target = "http://{http}/"
run = { strategies = ["pool:2"], concurrency = [2], duration = "20s", warmup = "0s" }
"#,
        ),
    );
    let mut child = bin()
        .args(["scenario", "run", "--quiet"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let server = loop {
        if let Some(&p) = children_of(child.id()).first() {
            break p;
        }
        assert!(std::time::Instant::now() < deadline, "no server started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_millis(1000));
    for _ in 0..2 {
        let sent = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(status.code(), Some(130));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !stopped(server) {
        assert!(
            std::time::Instant::now() < deadline,
            "the step's server {server} outlived the scenario"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
