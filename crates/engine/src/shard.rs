//! One share of a plan, run by one of several processes or machines
//! (`--shard I/N`): every cell's workers, pool sizes, rate and request
//! budget divided so the shards add up to the plan, on a wall-clock
//! schedule (`--start-at`) so the cells of all shards cover the same
//! windows. `merge` adds the shards' results back into the plan's.
use crate::load::LoadModel;
use crate::plan::{CellSpec, Plan};
use crate::ramp::{Ramp, Stage};
use poolbench_pool::StrategySpec;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

/// Shard `index` of `count`, counted from 0 (as Kubernetes'
/// `JOB_COMPLETION_INDEX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// Most shards one plan may have.
const MAX_SHARDS: usize = 10_000;

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard \"{s}\": expected I/N, e.g. 0/4"))?;
        let num = |t: &str| t.trim().parse::<usize>().ok();
        let (Some(index), Some(count)) = (num(i), num(n)) else {
            return Err(format!("shard \"{s}\": I and N must be whole numbers"));
        };
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("shard \"{s}\": N must be from 1 to {MAX_SHARDS}"));
        }
        if index >= count {
            return Err(format!(
                "shard \"{s}\": I counts from 0 (as JOB_COMPLETION_INDEX), so it must be below {count}"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A shard's stamp on its result: which share of which plan it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardStamp {
    pub index: usize,
    pub count: usize,
    /// SHA-256 of the plan without its shard (see [`plan_hash`]): equal
    /// for every shard of one plan.
    pub plan_hash: String,
    /// Where the plan did not divide evenly, how it was split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Why a plan cannot be split this way.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("--shard {shard}: {what} leaves shard {index} nothing to run; give every cell at least {count}, or fewer shards")]
pub struct SplitError {
    shard: Shard,
    what: String,
    index: usize,
    count: usize,
}

impl Shard {
    /// This shard's part of `total`: the remainder goes one each to the
    /// lowest indexes.
    pub fn share(&self, total: usize) -> usize {
        total / self.count + usize::from(self.index < total % self.count)
    }

    fn share_u64(&self, total: u64) -> u64 {
        let n = self.count as u64;
        total / n + u64::from((self.index as u64) < total % n)
    }

    fn part(&self, what: &str, total: usize) -> Result<usize, SplitError> {
        match self.share(total) {
            0 => Err(SplitError {
                shard: *self,
                what: format!("{what} {total}"),
                index: self.index,
                count: self.count,
            }),
            n => Ok(n),
        }
    }

    /// The strategy with each size divided (`shared` and `per-request`
    /// stay: one connection, or one per request, in each shard).
    pub fn strategy(&self, s: StrategySpec) -> Result<StrategySpec, SplitError> {
        let label = s.to_string();
        let part = |n: Option<usize>| n.map(|n| self.part(&label, n)).transpose();
        Ok(match s {
            StrategySpec::PerRequest | StrategySpec::Shared => s,
            StrategySpec::RoundRobin(n) => StrategySpec::RoundRobin(part(n)?),
            StrategySpec::LeastLoaded(n) => StrategySpec::LeastLoaded(part(n)?),
            StrategySpec::Pool(n) => StrategySpec::Pool(part(n)?),
            // The overflow may well be 0 in a shard: a plain pool there.
            StrategySpec::Elastic(n, m) => {
                StrategySpec::Elastic(part(n)?, m.map(|m| self.share(m)))
            }
            StrategySpec::TakeOrCreate(n) => StrategySpec::TakeOrCreate(part(n)?),
            // Each shard keeps the partitions, each of a share of the size.
            StrategySpec::Partitioned(k, n) => StrategySpec::Partitioned(k, part(n)?),
            StrategySpec::Deadpool(n) => StrategySpec::Deadpool(part(n)?),
            StrategySpec::Bb8(n) => StrategySpec::Bb8(part(n)?),
        })
    }

    /// This shard's part of one of the plan's cells.
    pub fn cell(&self, cell: CellSpec) -> Result<CellSpec, SplitError> {
        Ok(CellSpec {
            strategy: self.strategy(cell.strategy)?,
            concurrency: self.part("c=", cell.concurrency).map_err(|mut e| {
                e.what = format!("c={}", cell.concurrency);
                e
            })?,
        })
    }

    /// The plan as this shard runs it: the rate, the request budget, the
    /// batch size, the idle minimum and a ramp divided (the cells are
    /// divided one by one, [`Shard::cell`]).
    pub fn plan(&self, plan: &Plan) -> Plan {
        let mut p = plan.clone();
        let n = self.count as f64;
        p.load = match plan.load {
            LoadModel::Open { rate, arrival } => LoadModel::Open {
                rate: rate / n,
                arrival,
            },
            LoadModel::Batch { size, samples } => LoadModel::Batch {
                size: self.share_u64(size).max(1),
                samples,
            },
            LoadModel::Closed => LoadModel::Closed,
        };
        p.requests = plan.requests.map(|r| self.share_u64(r).max(1));
        p.pool.min_idle = self.share(plan.pool.min_idle);
        p.ramp = plan.ramp.as_ref().map(|r| Ramp {
            start: r.start / n,
            stages: r
                .stages
                .iter()
                .map(|s| Stage {
                    to: s.to / n,
                    over_s: s.over_s,
                })
                .collect(),
        });
        p
    }

    /// Every cell split, or why one cannot be; with a note for each
    /// figure that does not divide evenly.
    pub fn split(&self, plan: &Plan) -> Result<(Vec<CellSpec>, Vec<String>), SplitError> {
        let mut notes = std::collections::BTreeSet::new();
        let mut uneven = |what: String, total: usize| {
            if !total.is_multiple_of(self.count) {
                let parts: Vec<String> = (0..self.count)
                    .map(|i| {
                        Shard {
                            index: i,
                            count: self.count,
                        }
                        .share(total)
                        .to_string()
                    })
                    .collect();
                notes.insert(format!(
                    "{what} splits {} over {} shards",
                    parts.join("+"),
                    self.count
                ));
            }
        };
        let mut cells = Vec::new();
        for cell in plan.cells() {
            let part = self.cell(cell)?;
            uneven(format!("c={}", cell.concurrency), cell.concurrency);
            if let (Some(total), Some(_)) = (cell.strategy.size(), part.strategy.size()) {
                uneven(cell.strategy.to_string(), total);
            }
            cells.push(part);
        }
        if plan.strategies.contains(&StrategySpec::Shared) && self.count > 1 {
            notes.insert(format!(
                "shared: one connection in each shard, {} in all",
                self.count
            ));
        }
        Ok((cells, notes.into_iter().collect()))
    }
}

/// SHA-256 (hex) of the plan as results show it, without its shard and
/// its load threads (each machine uses its own cores): what every shard of
/// one plan has in common.
pub fn plan_hash(plan: &Plan) -> String {
    let mut p = plan.redacted();
    p.shard = None;
    p.threads = 0;
    let json = serde_json::to_vec(&p).unwrap_or_default();
    Sha256::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The wall-clock schedule of `--start-at`: run `k` (cell by cell, rep
/// by rep) starts its warm-up at `start + k × slot`.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub start: SystemTime,
    pub slot: Duration,
}

impl Schedule {
    /// Room given to each run beyond its warm-up and measured time: for
    /// the drain, closing, and the next run's connections.
    pub const GAP: Duration = Duration::from_secs(3);

    /// The plan's schedule, if it has a start time.
    pub fn of(plan: &Plan) -> Option<Schedule> {
        let start = parse_start(plan.start_at.as_deref()?).ok()?;
        Some(Schedule {
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

    fn shard(s: &str) -> Shard {
        s.parse().unwrap()
    }

    #[test]
    fn shares_add_up_to_the_total() {
        for total in [1usize, 2, 7, 10, 100, 10_001] {
            for n in 1..=7 {
                let sum: usize = (0..n)
                    .map(|i| Shard { index: i, count: n }.share(total))
                    .sum();
                assert_eq!(sum, total, "total {total} over {n}");
            }
        }
    }

    #[test]
    fn bad_shards_are_refused() {
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(shard("3/4"), Shard { index: 3, count: 4 });
    }

    #[test]
    fn a_plan_splits_cell_by_cell_with_notes() {
        let mut plan = Plan::new("http://127.0.0.1:1/".parse().unwrap());
        plan.strategies = vec![StrategySpec::Pool(Some(10)), StrategySpec::Shared];
        plan.concurrency = vec![4, 10];
        let (cells, notes) = shard("2/4").split(&plan).unwrap();
        assert_eq!(cells[0].concurrency, 1);
        assert_eq!(cells[0].strategy, StrategySpec::Pool(Some(2)));
        assert_eq!(cells[2].concurrency, 2);
        assert!(
            notes
                .iter()
                .any(|n| n == "c=10 splits 3+3+2+2 over 4 shards"),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.starts_with("shared:")), "{notes:?}");
        plan.concurrency = vec![2];
        let e = shard("3/4").split(&plan).unwrap_err().to_string();
        assert!(e.contains("c=2 leaves shard 3 nothing to run"), "{e}");
    }

    #[test]
    fn the_hash_ignores_the_shard_only() {
        let mut plan = Plan::new("http://127.0.0.1:1/".parse().unwrap());
        let h = plan_hash(&plan);
        plan.shard = Some(shard("1/3"));
        assert_eq!(plan_hash(&plan), h);
        plan.concurrency = vec![5];
        assert_ne!(plan_hash(&plan), h);
    }

    #[test]
    fn the_schedule_gives_each_run_a_slot() {
        let mut plan = Plan::new("http://127.0.0.1:1/".parse().unwrap());
        plan.start_at = Some("2026-11-23T18:00:00Z".into());
        plan.warmup = Duration::from_secs(1);
        plan.duration = Duration::from_secs(4);
        let s = Schedule::of(&plan).unwrap();
        assert_eq!(s.slot, Duration::from_secs(8));
        assert_eq!(s.at(2), s.start + Duration::from_secs(16));
        assert!(parse_start("tomorrow").is_err());
        assert!(parse_start("2026-11-23T18:00:00Z").is_ok());
    }
}
