//! One share of a plan, cell by cell: the split of every cell's workers
//! and pool sizes, the plan a shard runs, and the hash that every shard of
//! one plan shares.
use crate::load::LoadModel;
use crate::plan::{CellSpec, Plan};
use crate::ramp::{Ramp, Stage};
use crate::shard::{Shard, SplitError};
use crate::StrategySpec;
use sha2::{Digest, Sha256};

impl Shard {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetSpec;

    fn shard(s: &str) -> Shard {
        s.parse().unwrap()
    }

    #[test]
    fn a_plan_splits_cell_by_cell_with_notes() {
        let mut plan = Plan::new(TargetSpec::http(([127, 0, 0, 1], 1).into(), "/"));
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
        let mut plan = Plan::new(TargetSpec::http(([127, 0, 0, 1], 1).into(), "/"));
        let h = plan_hash(&plan);
        plan.shard = Some(shard("1/3"));
        assert_eq!(plan_hash(&plan), h);
        plan.concurrency = vec![5];
        assert_ne!(plan_hash(&plan), h);
    }
}
