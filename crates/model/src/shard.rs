//! One share of a plan, run by one of several processes or machines
//! (`--shard I/N`): every cell's workers, pool sizes, rate and request
//! budget divided so the shards add up to the plan, on a wall-clock
//! schedule (`--start-at`) so the cells of all shards cover the same
//! windows. `merge` adds the shards' results back into the plan's.
use crate::StrategySpec;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    /// SHA-256 of the plan without its shard (see `plan_hash`): equal
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
    pub(crate) shard: Shard,
    pub(crate) what: String,
    pub(crate) index: usize,
    pub(crate) count: usize,
}

impl Shard {
    /// This shard's part of `total`: the remainder goes one each to the
    /// lowest indexes.
    pub fn share(&self, total: usize) -> usize {
        total / self.count + usize::from(self.index < total % self.count)
    }

    pub(crate) fn share_u64(&self, total: u64) -> u64 {
        let n = self.count as u64;
        total / n + u64::from((self.index as u64) < total % n)
    }

    pub(crate) fn part(&self, what: &str, total: usize) -> Result<usize, SplitError> {
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
            StrategySpec::Pipeline(n, d) => StrategySpec::Pipeline(part(n)?, d),
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
            StrategySpec::MysqlAsync(n) => StrategySpec::MysqlAsync(part(n)?),
        })
    }
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
}
