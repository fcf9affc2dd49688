//! Ctrl-C and SIGTERM in the middle of a grid keep what was measured: the
//! report, the `-o` JSON with the finished cells and the interrupted one,
//! and exit 130 or 143. A second signal ends the process at once.
/// The tests time signals against the grid: they take turns with the other
/// timed and heavy tests, so none waits for the cores while another runs.
use crate::turns::ONE_AT_A_TIME;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn out_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("poolbench-int-{name}-{}.json", std::process::id()))
}

/// A 4-cell grid of 1.5 s cells on the built-in server.
fn start(out: &PathBuf) -> Child {
    Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .args(["run", "-s", "pool:4,shared", "-c", "4,8", "-d", "1500ms"])
        .args(["--warmup", "0s", "--quiet", "-o"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name}");
}

fn interrupted_mid_grid(sig: &str, code: i32) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let out = out_file(sig);
    let _ = std::fs::remove_file(&out);
    let child = start(&out);
    // Into the second cell.
    std::thread::sleep(Duration::from_millis(2300));
    signal(&child, sig);
    let sent = Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?} to stop",
        sent.elapsed()
    );
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert_eq!(
        done.status.code(),
        Some(code),
        "{stdout}\n{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(
        stdout.contains(&format!("INTERRUPTED by SIG{sig}")),
        "{stdout}"
    );
    assert!(stdout.contains("pool:4"), "the report's table: {stdout}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert_eq!(r["interrupted"], format!("SIG{sig}"));
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "the finished cell and the interrupted one");
    assert!(cells[0]["interrupted"].is_null(), "{}", cells[0]);
    assert_eq!(cells[0]["duration_s"].as_f64().unwrap(), 1.5);
    assert_eq!(cells[1]["interrupted"], true);
    let cut = cells[1]["duration_s"].as_f64().unwrap();
    assert!(cut > 0.2 && cut < 1.5, "measured up to the stop: {cut}");
    assert!(cells[1]["requests"].as_u64().unwrap() > 0);
}

#[test]
fn sigint_mid_grid_keeps_the_cells_and_exits_130() {
    interrupted_mid_grid("INT", 130);
}

#[test]
fn sigterm_mid_grid_keeps_the_cells_and_exits_143() {
    interrupted_mid_grid("TERM", 143);
}

#[test]
fn a_second_signal_ends_at_once() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let out = out_file("twice");
    let _ = std::fs::remove_file(&out);
    let child = start(&out);
    std::thread::sleep(Duration::from_millis(700));
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, "INT");
    let sent = Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(done.status.code(), Some(130));
    let _ = std::fs::remove_file(&out);
}

/// A stopped tune ends within this: a hang guard (it stops in well under
/// a second).
const STOPS_WITHIN: Duration = Duration::from_secs(10);

/// `child`'s stderr read up to the first line holding `needle`: the
/// reader, to read the rest from, and what was read.
fn until_said(
    child: &mut Child,
    needle: &str,
) -> (std::io::BufReader<std::process::ChildStderr>, String) {
    use std::io::BufRead;
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains(needle) {
        let mut l = String::new();
        if stderr.read_line(&mut l).unwrap() == 0 {
            break;
        }
        said.push_str(&l);
    }
    (stderr, said)
}

/// `tune ARGS --format json`, sent SIGINT `after` its stderr first says
/// `said`: its output, and all it wrote to stderr. It must stop (a hang
/// guard, not a speed bound).
fn tune_stopped(args: &[&str], said: &str, after: Duration) -> (std::process::Output, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
        .arg("tune")
        .args(args)
        .args(["--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut stderr, mut text) = until_said(&mut child, said);
    assert!(text.contains(said), "tune never said {said:?}: {text}");
    std::thread::sleep(after);
    signal(&child, "INT");
    let sent = Instant::now();
    let done = child.wait_with_output().unwrap();
    let stopped = sent.elapsed();
    stderr.read_to_string(&mut text).unwrap();
    assert!(stopped < STOPS_WITHIN, "took {stopped:?} to stop\n{text}");
    (done, text)
}

/// `tune` stopped mid-search: the points measured whole are kept, the
/// one the signal cut is not taken for a failure, and it exits 130.
#[test]
fn sigint_mid_tune_keeps_the_points_and_exits_130() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Once the first point is measured, into the second.
    let args = ["-c", "32", "--server-delay", "5ms", "--budget", "28s"];
    let (done, said) = tune_stopped(&args, "capacity", Duration::from_millis(300));
    assert_eq!(done.status.code(), Some(130), "{said}");
    let r: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(r["stopped_early"], "interrupted", "{r}");
    let points = r["points"].as_array().unwrap();
    assert!(!points.is_empty(), "{said}");
    for p in points {
        assert!(p["requests"].as_u64().unwrap() > 0, "{p}");
        assert_eq!(p["error_rate"].as_f64().unwrap(), 0.0, "{p}");
    }
    assert!(
        r["capacity"]["cliff_in_flight"].is_null(),
        "{}",
        r["capacity"]
    );
}

/// `tune` looks at how long the server keeps an idle connection before
/// any load, with gaps of up to a quarter of the budget: a signal ends
/// the look at once (before, the look ran to its end and its result was
/// written), and the result says why the search stopped (exit 130).
#[test]
fn a_signal_during_tunes_idle_look_ends_it_at_once() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The built-in server in a process of its own: its 60 s keep-alive is
    // not known to tune, which measures it.
    let server = crate::services::Serve::start(&[]);
    let url = server.url("/");
    let args = [
        &url,
        "-c",
        "2",
        "--budget",
        "28s",
        "--idle-probe-max",
        "20s",
    ];
    let (done, said) = tune_stopped(&args, "idle:", Duration::from_millis(500));
    assert!(said.contains("measuring"), "{said}");
    assert_eq!(done.status.code(), Some(130), "{said}");
    let r: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(r["stopped_early"], "interrupted", "{r}");
    assert_eq!(r["server_idle"]["note"], "not measured: interrupted", "{r}");
}

/// `serve` on the first SIGINT or SIGTERM: the request in flight is
/// answered, then it exits 0.
#[test]
fn serve_answers_what_is_in_flight_then_exits_0() {
    use std::io::{BufRead, BufReader, Read, Write};
    for sig in ["TERM", "INT"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_poolbench"))
            .args(["serve", "--listen", "127.0.0.1:0", "--delay", "800ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line.split_whitespace().last().unwrap().to_string();
        let mut conn = std::net::TcpStream::connect(&addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(conn, "GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let sent = Instant::now();
        signal(&child, sig);
        let mut answer = [0u8; 12];
        conn.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"HTTP/1.1 200", "SIG{sig}");
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "SIG{sig}");
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "SIG{sig}: {:?}",
            sent.elapsed()
        );
    }
}

#[test]
fn a_full_disk_under_o_is_one_line_and_the_stdout_result_is_kept() {
    // A 16 KiB filesystem of the test's own (a mount namespace, as an
    // unprivileged user may make one): the probe before the load fits, the
    // result after it does not.
    let serve = crate::services::Serve::start(&[]);
    let dir = std::env::temp_dir().join(format!("poolbench-full-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let script = format!(
        "mount -t tmpfs -o size=16k tmpfs {d} && exec {} run {} -c 2 -d 1s --warmup 0s --quiet --format json -o {d}/result.json",
        env!("CARGO_BIN_EXE_poolbench"),
        serve.url("/")
    );
    let out = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .output()
        .expect("unshare (util-linux) runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("No space left"),
        "{stderr}"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the result on stdout");
    assert!(result["cells"][0]["ok"].as_u64().unwrap() > 0);
}
