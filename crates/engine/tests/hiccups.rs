//! The hiccup meter sees the generator stop. Its own test binary: the
//! whole process (the built-in server too) is stopped for 200 ms.
mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_stopped_generator_is_a_finding() {
    // A helper stops this process 1 s into the run and resumes it 200 ms
    // later; it is its own process, since a stopped one cannot resume.
    let pid = std::process::id();
    let mut helper = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sleep 1; kill -STOP {pid}; sleep 0.2; kill -CONT {pid}"
        ))
        .spawn()
        .expect("sh starts");
    let result = quick_run(delay("1ms"), "pool:10", &[10], |p| {
        p.warmup = Duration::from_millis(300);
        p.duration = Duration::from_millis(2500);
    });
    assert!(helper.wait().expect("helper ends").success());
    let c = &result.cells[0];
    let h = &c.generator_hiccups_us;
    assert!(h.max >= 150_000.0, "hiccup max {} µs", h.max);
    assert!(h.p999 >= 100_000.0, "hiccup p99.9 {} µs", h.p999);
    let ids = pitfall_ids(&result);
    assert!(ids.iter().any(|i| i == "generator-hiccups"), "{ids:?}");
    let p = result
        .pitfalls
        .iter()
        .find(|p| p.id == "generator-hiccups")
        .unwrap();
    assert_eq!(p.cells, vec!["pool:10 c=10".to_string()]);
}
