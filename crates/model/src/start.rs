//! The wall-clock slots of `--start-at`, so the runs of every shard
//! cover the same windows.
use crate::plan::Plan;
use std::time::{Duration, SystemTime};

/// The wall-clock schedule of `--start-at`: run `k` (cell by cell, rep
/// by rep) starts its warm-up at `start + k × slot`.
#[derive(Clone, Copy, Debug)]
pub struct StartSlots {
    pub start: SystemTime,
    pub slot: Duration,
}

impl StartSlots {
    /// Room given to each run beyond its warm-up and measured time: for
    /// the drain, closing, and the next run's connections.
    pub const GAP: Duration = Duration::from_secs(3);

    /// The plan's schedule, if it has a start time.
    pub fn of(plan: &Plan) -> Option<StartSlots> {
        let start = parse_start(plan.start_at.as_deref()?).ok()?;
        Some(StartSlots {
            start,
            slot: plan.slot.unwrap_or(plan.warmup + plan.duration + Self::GAP),
        })
    }

    /// When run `k` starts.
    pub fn at(&self, k: usize) -> SystemTime {
        self.start + self.slot * k as u32
    }
}

/// Parse an RFC 3339 instant in UTC (`2026-11-23T18:00:00Z`), as
/// `--start-at` takes it.
pub fn parse_start(s: &str) -> Result<SystemTime, String> {
    humantime::parse_rfc3339_weak(s).map_err(|e| {
        format!("--start-at \"{s}\": {e} (expected RFC 3339 in UTC, e.g. 2026-11-23T18:00:00Z)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetSpec;

    #[test]
    fn the_schedule_gives_each_run_a_slot() {
        let mut plan = Plan::new(TargetSpec::http(([127, 0, 0, 1], 1).into(), "/"));
        plan.start_at = Some("2026-11-23T18:00:00Z".into());
        plan.warmup = Duration::from_secs(1);
        plan.duration = Duration::from_secs(4);
        let s = StartSlots::of(&plan).unwrap();
        assert_eq!(s.slot, Duration::from_secs(8));
        assert_eq!(s.at(2), s.start + Duration::from_secs(16));
        assert!(parse_start("tomorrow").is_err());
        assert!(parse_start("2026-11-23T18:00:00Z").is_ok());
    }
}
