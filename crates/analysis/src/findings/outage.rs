//! `outage`: the target stopped answering (every attempt failed, none
//! succeeded, connections refused or cut) for a while, and when it came
//! back, from the cell's timeline (its first run). A frozen target, which
//! answers nothing and fails nothing (or only by timeouts), is a `stall`.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::Outage,
    title:
        "the target stopped answering for a while: every attempt failed, then it came back (or not)",
    find,
};

/// Buckets in a row (100 ms each) with failures only that make an outage.
const MIN_BUCKETS: usize = 3;

/// A stretch of a cell's measured window when the target was down, in
/// seconds into the measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    pub from_s: f64,
    pub to_s: f64,
    /// Attempts that failed in it.
    pub failed: u64,
    /// When it answered again; `None`: not by the end of the cell.
    pub back_s: Option<f64>,
}

/// The outages of a cell, from its timeline (its first run): three or more
/// 100 ms buckets in a row with failures and no success, in a cell whose
/// connections were refused or cut.
pub fn outages(c: &CellResult) -> Vec<Outage> {
    // Down means unreachable: connections refused or cut. Failures of
    // other kinds only (timeouts of a frozen target, error statuses) are a
    // stall or errors, not an outage.
    let unreachable = ["refused", "reset"]
        .iter()
        .any(|k| c.errors.by_kind.get(*k).is_some_and(|&n| n > 0));
    let mut out = Vec::new();
    if !unreachable {
        return out;
    }
    let t = &c.timeline;
    let bucket = t.bucket_ms as f64 / 1000.0;
    let at = |i: usize| (i as f64 - t.measure_from_bucket as f64) * bucket;
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
        // Trailing buckets with nothing at all after the last failure are
        // the end of the cell, not the outage.
        let mut last = i - 1;
        while last > from && t.errors[last] == 0 {
            last -= 1;
        }
        if last + 1 - from < MIN_BUCKETS {
            continue;
        }
        out.push(Outage {
            from_s: at(from),
            to_s: at(last + 1),
            failed: t.errors[from..=last].iter().map(|&n| u64::from(n)).sum(),
            back_s: (i < t.ok.len()).then(|| at(i)),
        });
    }
    out
}

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let kinds: Vec<String> = c
            .errors
            .by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        for o in outages(c) {
            let back = match o.back_s {
                Some(s) => format!("back at {s:.1} s"),
                None => "not back by the end of the cell".to_string(),
            };
            out.push(Evidence::cell(
                c,
                format!(
                    "down from {:.1} s to {:.1} s into the measurement ({} attempts failed, none succeeded), {back}; the cell's errors: {}",
                    o.from_s,
                    o.to_s,
                    o.failed,
                    kinds.join(", ")
                ),
            ));
        }
    }
    out
}
