//! The division proved: the pool per replica run as N client processes at
//! once against the service, their results merged exactly, beside the one
//! process with the whole pool, in paired rounds.
use serde::{Deserialize, Serialize};

/// The fleet's run against the one process's, round by round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetCheck {
    /// Client processes run at once.
    pub replicas: usize,
    /// Each process's strategy (`pool:6`).
    pub replica_strategy: String,
    /// The one process's strategy (`pool:24`): the single-process pick.
    pub single_strategy: String,
    /// Workers of all processes together (each runs its share).
    pub workers: usize,
    /// Paired rounds, in the order run (one, fleet, fleet, one, …).
    pub rounds: Vec<FleetRound>,
    /// Median over rounds of the fleet's throughput ÷ the one process's.
    pub throughput_ratio: f64,
    /// Median over rounds of the fleet's p99 ÷ the one process's.
    pub p99_ratio: f64,
    /// The fleet carried at least [`FLEET_WITHIN`] of the one process's
    /// throughput, without errors beyond its.
    pub holds: bool,
    /// Why the check ran short or not at all, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One round: both runs' throughput and p99, and errors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetRound {
    pub single_rps: f64,
    pub single_p99_us: f64,
    pub single_errors: u64,
    pub fleet_rps: f64,
    pub fleet_p99_us: f64,
    pub fleet_errors: u64,
}

/// The share of the one process's throughput the fleet must carry.
pub const FLEET_WITHIN: f64 = 0.9;

impl FleetCheck {
    /// The check's verdict from its rounds.
    pub fn conclude(&mut self) {
        let ratio = |f: fn(&FleetRound) -> (f64, f64)| {
            let mut r: Vec<f64> = self
                .rounds
                .iter()
                .map(f)
                .filter(|(_, b)| *b > 0.0)
                .map(|(a, b)| a / b)
                .collect();
            r.sort_by(f64::total_cmp);
            match r.len() {
                0 => 0.0,
                n if n % 2 == 1 => r[n / 2],
                n => (r[n / 2 - 1] + r[n / 2]) / 2.0,
            }
        };
        self.throughput_ratio = ratio(|r| (r.fleet_rps, r.single_rps));
        self.p99_ratio = ratio(|r| (r.fleet_p99_us, r.single_p99_us));
        let errors = |f: fn(&FleetRound) -> u64| self.rounds.iter().map(f).sum::<u64>();
        self.holds = !self.rounds.is_empty()
            && self.throughput_ratio >= FLEET_WITHIN
            && errors(|r| r.fleet_errors) <= errors(|r| r.single_errors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(single: f64, fleet: f64) -> FleetRound {
        FleetRound {
            single_rps: single,
            single_p99_us: 1000.0,
            fleet_rps: fleet,
            fleet_p99_us: 1100.0,
            ..FleetRound::default()
        }
    }

    #[test]
    fn the_fleet_holds_within_a_tenth_of_the_one_process() {
        let mut c = FleetCheck {
            rounds: vec![round(100.0, 95.0), round(100.0, 80.0), round(100.0, 97.0)],
            ..FleetCheck::default()
        };
        c.conclude();
        assert!((c.throughput_ratio - 0.95).abs() < 1e-9);
        assert!((c.p99_ratio - 1.1).abs() < 1e-9);
        assert!(c.holds);
        c.rounds[2].fleet_errors = 3;
        c.conclude();
        assert!(!c.holds, "errors the one process did not have");
        c.rounds = vec![round(100.0, 85.0), round(100.0, 88.0)];
        c.conclude();
        assert!(!c.holds);
        c.rounds.clear();
        c.conclude();
        assert!(!c.holds);
    }
}
