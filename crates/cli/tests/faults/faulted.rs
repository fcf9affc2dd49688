//! What a run under a fault produced, and the checks every fault test
//! makes of it: the fault's window in the measurement's seconds, the rate
//! within it against the healthy rate, the stall and the errors' window.
use super::{FAULT, RUN_S};
use serde_json::Value;

/// What a run under a fault produced.
pub(super) struct Faulted {
    pub(super) result: Value,
    pub(super) wall_s: f64,
    /// When the fault was put on and taken off (Unix seconds).
    pub(super) fault_unix_s: (f64, f64),
}

/// The time now, in Unix seconds.
pub(super) fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

impl Faulted {
    pub(super) fn cell(&self) -> &Value {
        &self.result["cells"][0]
    }

    pub(super) fn errors(&self, kind: &str) -> u64 {
        self.cell()["errors"]["by_kind"][kind].as_u64().unwrap_or(0)
    }

    pub(super) fn total_errors(&self) -> u64 {
        self.cell()["errors"]["total"].as_u64().unwrap()
    }

    pub(super) fn finding(&self, id: &str) -> Option<&Value> {
        self.result["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
    }

    /// The fault's window in seconds of the measurement (its timeline's
    /// zero is the cell's `started_unix_s`), which begins when the run has
    /// started up: a fraction of a second after the process on a quiet
    /// machine, more on a busy one.
    pub(super) fn window(&self) -> (f64, f64) {
        match self.cell()["started_unix_s"].as_f64() {
            Some(zero) => (self.fault_unix_s.0 - zero, self.fault_unix_s.1 - zero),
            None => FAULT,
        }
    }

    /// The fault made the rate fall below `share` of the healthy rate:
    /// successes per second within the window (its first and last half
    /// second left out) against the better of before it and a second
    /// after it. Not only before: on a busy machine eight PostgreSQL
    /// logins through the proxy took 2.6 s, past the fault's start.
    pub(super) fn assert_slowed_below(&self, share: f64, what: &str) {
        let (on, off) = self.window();
        let within = self.rate(on + 0.5, off - 0.5);
        let healthy = self
            .rate(0.5, on - 0.2)
            .max(self.rate(off + 1.0, RUN_S + 1.0));
        assert!(
            healthy > 0.0 && within < share * healthy,
            "{what}: {within:.0}/s in the window ({on:.1} s to {off:.1} s), {healthy:.0}/s healthy: {}",
            self.trail()
        );
    }

    /// Successes per second between `from` and `to` seconds of the cell.
    pub(super) fn rate(&self, from: f64, to: f64) -> f64 {
        let t = &self.cell()["timeline"];
        let bucket = t["bucket_ms"].as_f64().unwrap() / 1000.0;
        let ok: Vec<f64> = t["ok"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let (a, b) = ((from / bucket) as usize, (to / bucket) as usize);
        let b = b.min(ok.len());
        ok[a.min(b)..b].iter().sum::<f64>() / ((b - a.min(b)).max(1) as f64 * bucket)
    }

    /// Answering again after the fault is gone: requests succeed from
    /// half a second after its end to the end of the run. How fast it
    /// comes back is the machine's: beside the other test lanes the rate
    /// swings threefold from second to second, and PostgreSQL's eight new
    /// sessions through the proxy took 3.5 s to log in once.
    pub(super) fn assert_recovered(&self, what: &str) {
        let after = self.rate(self.window().1 + 0.5, RUN_S + 1.0);
        assert!(
            after > 0.0,
            "{what}: nothing answered after the fault: {}",
            self.trail()
        );
    }

    /// The stall the cell records lies in the fault's window: it starts
    /// within half a second of the fault and lasts most of it.
    pub(super) fn assert_stall_in_the_window(&self) {
        let stalls = self.cell()["stalls"].as_array().unwrap();
        let (on, off) = self.window();
        assert!(
            stalls.iter().any(|s| {
                let start = s["start_s"].as_f64().unwrap();
                let len = s["duration_s"].as_f64().unwrap();
                (on - 0.5..=on + 0.6).contains(&start) && len >= off - on - 1.1
            }),
            "{}",
            self.trail()
        );
    }

    /// Every error is of one of `kinds`.
    pub(super) fn assert_only(&self, kinds: &[&str]) {
        let by_kind = self.cell()["errors"]["by_kind"].as_object().unwrap();
        assert!(
            by_kind.keys().all(|k| kinds.contains(&k.as_str())),
            "not only {kinds:?}: {}",
            self.trail()
        );
    }

    /// The `errors` finding says when: from within the fault's window
    /// (seconds of the measurement, which begins a little after the
    /// process) to no earlier than that start. When the errors stop is the
    /// machine's: on a busy machine a cut connection's 1 s timeout and
    /// the reconnects after it ran to 7.5 s of the 8, so the end is
    /// bounded by the run only.
    pub(super) fn assert_errors_in_the_window(&self) {
        let errors = self
            .finding("errors")
            .unwrap_or_else(|| panic!("no errors finding: {}", self.trail()));
        let line = errors["evidence"][0].as_str().unwrap();
        let span = line
            .split_once(", from ")
            .and_then(|(_, w)| w.split_once(" s of the measurement"))
            .and_then(|(w, _)| w.split_once(" s to "))
            .and_then(|(a, b)| Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?)))
            .unwrap_or_else(|| panic!("no window in {line:?}"));
        let (on, off) = self.window();
        assert!(
            (on - 0.7..=off).contains(&span.0) && (span.0..=RUN_S + 1.0).contains(&span.1),
            "{line}: {}",
            self.trail()
        );
    }

    pub(super) fn trail(&self) -> String {
        let t = &self.cell()["timeline"];
        format!(
            "{:.1} s; stalls {}; ok {}; in flight {}; errors {}; findings {}",
            self.wall_s,
            self.cell()["stalls"],
            t["ok"],
            t["inflight"],
            self.cell()["errors"],
            self.result["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| format!("{}: {}", p["id"], p["evidence"]))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    }
}
