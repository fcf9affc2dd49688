//! A database that goes away mid-run (a PostgreSQL of the test's own,
//! started by scripts/services.sh): errors are counted, the run completes,
//! and the pool recovers. Alone in its binary, so no other test's load
//! shares the machine while throughput before and after is compared.
mod services;

use services::{run_json, OwnPostgres};
use std::time::{Duration, Instant};

#[test]
fn a_database_that_goes_away_mid_run_is_counted_and_recovered_from() {
    let pg = OwnPostgres::start("outage");
    let url = pg.url.clone();
    let run = std::thread::spawn(move || {
        run_json(&[
            "run",
            &url,
            "-s",
            "pool:4",
            "-c",
            "4",
            "-d",
            "7s",
            "--warmup",
            "0s",
            "--timeout",
            "1s",
            "--connect-timeout",
            "1s",
        ])
    });
    std::thread::sleep(Duration::from_millis(1500));
    pg.stop();
    std::thread::sleep(Duration::from_secs(2));
    pg.restart();
    let started = Instant::now();
    let r = run.join().expect("the run completes");
    assert!(started.elapsed() < Duration::from_secs(15));
    let c = &r["cells"][0];
    assert!(c["errors"]["total"].as_u64().unwrap() > 0, "errors counted");
    let ok: Vec<u64> = c["timeline"]["ok"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // 100 ms buckets. The first second, against what follows half a
    // second after the database came back (the last empty bucket), per
    // bucket.
    let first: u64 = ok.iter().skip(2).take(10).sum();
    let tail = ok.len().saturating_sub(2);
    let back = ok[..tail].iter().rposition(|&v| v == 0).expect("an outage") + 1;
    let after = &ok[(back + 5).min(tail)..tail];
    assert!(
        back > 15 && after.len() >= 5,
        "an outage, then at least half a second to recover in: {ok:?}"
    );
    let after = after.iter().sum::<u64>() * 10 / after.len() as u64;
    assert!(first > 0, "{ok:?}");
    assert!(
        after * 2 >= first,
        "back to full throughput: {after} per second after the return against {first} in the first ({ok:?})"
    );
}
