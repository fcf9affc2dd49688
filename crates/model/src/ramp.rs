//! Load that ramps within one continuous run: concurrency moves linearly
//! from stage to stage (`--ramp 10..1000/30s`, or `4..16/4s,16/2s,4/3s`),
//! the connections kept, and each second of the run is summarized so a
//! pool's growth and shrinkage can be read.
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where the ramp starts, and each stage's target and length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ramp {
    /// Concurrency at the start (and during the warm-up).
    pub start: f64,
    pub stages: Vec<Stage>,
}

/// Move linearly to `to` over `over_s` seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stage {
    pub to: f64,
    pub over_s: f64,
}

/// Longest ramp in all.
const MAX_TOTAL: Duration = Duration::from_secs(24 * 3600);

impl Ramp {
    /// `A..B/D` then any number of `,C/D` stages continuing from the last
    /// target: `10..1000/30s`, `4..16/4s,16/2s,4/3s`.
    pub fn parse(text: &str) -> Result<Ramp, String> {
        let bad =
            |why: &str| format!("--ramp {text}: {why} (e.g. 10..1000/30s or 4..16/4s,16/2s,4/3s)");
        let mut parts = text.split(',').map(str::trim);
        let first = parts.next().unwrap_or("");
        let (start, rest) = first
            .split_once("..")
            .ok_or_else(|| bad("the first stage is FROM..TO/DURATION"))?;
        let start: f64 = start
            .trim()
            .parse()
            .map_err(|_| bad("FROM is not a number"))?;
        let mut stages = vec![stage(rest).map_err(|w| bad(&w))?];
        for p in parts {
            stages.push(stage(p).map_err(|w| bad(&w))?);
        }
        let ramp = Ramp { start, stages };
        // NaN is below 1 too.
        let below_one = |v: f64| v.is_nan() || v < 1.0;
        if below_one(start) || ramp.stages.iter().any(|s| below_one(s.to)) {
            return Err(bad("every concurrency is at least 1"));
        }
        if ramp.peak() > 10_000_000.0 {
            return Err(bad("concurrency above 10,000,000"));
        }
        if ramp.total() > MAX_TOTAL {
            return Err(bad("longer than a day"));
        }
        Ok(ramp)
    }

    /// The whole ramp's length.
    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.stages.iter().map(|s| s.over_s).sum())
    }

    /// The highest concurrency it reaches (workers to start).
    pub fn peak(&self) -> f64 {
        self.stages.iter().map(|s| s.to).fold(self.start, f64::max)
    }

    /// The concurrency `t` into the measured window (the start before it,
    /// the last target after it).
    pub fn at(&self, t: f64) -> f64 {
        let mut from = self.start;
        let mut begin = 0.0;
        for s in &self.stages {
            if t < begin + s.over_s {
                let share = ((t - begin) / s.over_s).clamp(0.0, 1.0);
                return from + (s.to - from) * share;
            }
            from = s.to;
            begin += s.over_s;
        }
        from
    }

    /// Worker `i` (0-based) runs while the concurrency is above `i`: the
    /// first time from `t` on when it is, if ever.
    pub fn next_active(&self, i: usize, t: f64) -> Option<f64> {
        let i = i as f64;
        if self.at(t) > i {
            return Some(t);
        }
        let mut from = self.start;
        let mut begin = 0.0;
        for s in &self.stages {
            let end = begin + s.over_s;
            if end > t && s.to > i {
                // Rising through i within this stage.
                let share = match s.to > from {
                    true => ((i - from) / (s.to - from)).max(0.0),
                    false => 0.0,
                };
                // Just past the crossing, so the concurrency is above i.
                return Some((begin + share * s.over_s).max(t) + 1e-3);
            }
            from = s.to;
            begin = end;
        }
        None
    }
}

fn stage(text: &str) -> Result<Stage, String> {
    let (to, over) = text.split_once('/').ok_or("each stage is TO/DURATION")?;
    let to: f64 = to.trim().parse().map_err(|_| "TO is not a number")?;
    let over = crate::duration::parse(over).map_err(|_| "DURATION is not a duration")?;
    if over.is_zero() {
        return Err("a stage lasts longer than 0s".into());
    }
    Ok(Stage {
        to,
        over_s: over.as_secs_f64(),
    })
}

/// One second of a ramped cell's measured window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RampSecond {
    /// Seconds into the measured window.
    pub t_s: u32,
    /// The ramp's concurrency (closed loop) or rate (open loop) in the
    /// middle of the second.
    pub target: f64,
    pub throughput_rps: f64,
    pub errors: u32,
    pub p99_us: f64,
    /// Connections open at the end of the second.
    pub connections_open: u32,
    /// Mean checkout wait of the second's successes.
    pub checkout_wait_mean_us: f64,
}

/// A ramped cell, second by second, and where it turned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RampSummary {
    pub seconds: Vec<RampSecond>,
    /// The concurrency (or rate) at which throughput stopped growing: the
    /// first second at 95% of the peak second, if the ramp rose on after it.
    pub saturated_at: Option<f64>,
    /// The concurrency (or rate) at which p99 first crossed the `--slo` p99
    /// bound.
    pub slo_p99_crossed_at: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_parse_and_interpolate() {
        let r = Ramp::parse("4..16/4s,16/2s,4/3s").unwrap();
        assert_eq!(r.start, 4.0);
        assert_eq!(r.peak(), 16.0);
        assert_eq!(r.total(), Duration::from_secs(9));
        assert_eq!(r.at(0.0), 4.0);
        assert_eq!(r.at(2.0), 10.0);
        assert_eq!(r.at(5.0), 16.0);
        assert_eq!(r.at(7.5), 10.0);
        assert_eq!(r.at(100.0), 4.0);
        // Worker 9 (the tenth) starts when the concurrency passes 9.
        let t = r.next_active(9, 0.0).unwrap();
        assert!((t - 5.0 / 3.0).abs() < 0.01, "{t}");
        assert!(r.at(t) > 9.0);
        // Worker 15 never runs again after the hold.
        assert_eq!(r.next_active(15, 6.5), None);
        assert_eq!(r.next_active(2, 3.0), Some(3.0));
    }

    #[test]
    fn bad_ramps_say_why() {
        for (text, why) in [
            ("10", "FROM..TO/DURATION"),
            ("a..10/1s", "FROM is not a number"),
            ("1..10", "TO/DURATION"),
            ("1..10/x", "not a duration"),
            ("1..10/0s", "longer than 0s"),
            ("0..10/1s", "at least 1"),
            ("1..100000000/1s", "10,000,000"),
        ] {
            let e = Ramp::parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
