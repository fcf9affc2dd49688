//! `outage`: the target stopped answering (every attempt failed, none
//! succeeded, connections refused or cut) for a while, and when it came
//! back, from the cell's timeline (its first run). A frozen target, which
//! answers nothing and fails nothing (or only by timeouts), is a `stall`.
use super::{Check, Evidence, Run};

pub(super) const CHECK: Check = Check {
    id: "outage",
    title:
        "the target stopped answering for a while: every attempt failed, then it came back (or not)",
    find,
};

/// Buckets in a row (100 ms each) with failures only that make an outage.
const MIN_BUCKETS: usize = 3;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        // Down means unreachable: connections refused or cut. Failures of
        // other kinds only (timeouts of a frozen target, error statuses)
        // are a stall or errors, not an outage.
        let unreachable = ["refused", "reset"]
            .iter()
            .any(|k| c.errors.by_kind.get(*k).is_some_and(|&n| n > 0));
        if !unreachable {
            continue;
        }
        let t = &c.timeline;
        let bucket = t.bucket_ms as f64 / 1000.0;
        let at = |i: usize| (i as f64 - t.measure_from_bucket as f64) * bucket;
        let kinds: Vec<String> = c
            .errors
            .by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let mut i = t.measure_from_bucket;
        while i < t.ok.len() {
            let down = |j: usize| t.ok[j] == 0 && t.errors[j] > 0;
            if !down(i) {
                i += 1;
                continue;
            }
            let from = i;
            while i < t.ok.len() && t.ok[i] == 0 {
                i += 1;
            }
            // Trailing buckets with nothing at all after the last failure
            // are the end of the cell, not the outage.
            let mut last = i - 1;
            while last > from && t.errors[last] == 0 {
                last -= 1;
            }
            if last + 1 - from < MIN_BUCKETS {
                continue;
            }
            let failed: u64 = t.errors[from..=last].iter().map(|&n| u64::from(n)).sum();
            let back = match i < t.ok.len() {
                true => format!("back at {:.1} s", at(i)),
                false => "not back by the end of the cell".to_string(),
            };
            out.push(Evidence::cell(
                c,
                format!(
                    "down from {:.1} s to {:.1} s into the measurement ({failed} attempts failed, none succeeded), {back}; the cell's errors: {}",
                    at(from),
                    at(last + 1),
                    kinds.join(", ")
                ),
            ));
        }
    }
    out
}
