//! The hiccup meter sees the generator stop: the whole process (the
//! built-in server too) is stopped for 200 ms, twice, during its turn.
use crate::common::*;
use poolbench_model::findings::Id;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_stopped_generator_is_a_finding() {
    // A helper stops this process for 200 ms twice, about 0.8 s and 1.8 s
    // into the run, and resumes it; it is its own process, since a stopped
    // one cannot resume. The meter counts only the measured window (from
    // 0.3 s to 2.8 s after the cell starts), and a slow start on a busy
    // machine once put a single stop before it: with two, one lands inside
    // unless the cell starts more than 1.5 s late. Each stop's wall-clock
    // time is logged for a failure's message.
    let pid = std::process::id();
    let log = std::env::temp_dir().join(format!("poolbench-hiccups-{pid}.log"));
    let stop = format!(
        "date +%s.%N >>{log}; kill -STOP {pid}; sleep 0.2; kill -CONT {pid}",
        log = log.display()
    );
    // The stops are timed from here: the run must not wait for its turn
    // after them.
    let _turn = turn();
    let mut helper = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 0.8; {stop}; sleep 0.8; {stop}"))
        .spawn()
        .expect("sh starts");
    let (server, mut plan) = quick(delay("1ms"), "pool:10", &[10]);
    plan.warmup = Duration::from_millis(300);
    plan.duration = Duration::from_millis(2500);
    let result = run_in_turn(&server, &plan);
    assert!(helper.wait().expect("helper ends").success());
    let stops = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let start = result.cells[0].started_unix_s.unwrap_or_default();
    let when: Vec<String> = stops
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .map(|t| format!("{:.3} s", t - start))
        .collect();
    let when = format!("stops at {when:?} after the cell's start (measured from 0.3 s to 2.8 s)");
    let c = &result.cells[0];
    let h = &c.generator_hiccups_us;
    assert!(h.max >= 150_000.0, "hiccup max {} µs; {when}", h.max);
    assert!(h.p999 >= 100_000.0, "hiccup p99.9 {} µs; {when}", h.p999);
    let ids = finding_ids(&result);
    assert!(ids.iter().any(|i| i == "generator-hiccups"), "{ids:?}");
    let p = result
        .findings
        .iter()
        .find(|p| p.id == Id::GeneratorHiccups)
        .unwrap();
    assert_eq!(p.cells, vec!["pool:10 c=10".to_string()]);
}
