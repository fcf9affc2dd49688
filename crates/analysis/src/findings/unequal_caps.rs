//! `unequal-caps`: different kinds of strategy compared at one concurrency
//! with different effective connection caps compare caps, not strategies.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;
use std::collections::BTreeMap;

pub(crate) const CHECK: Check = Check {
    id: Id::UnequalCaps,
    title: "strategies compared with different connection caps: the ranking compares caps, not strategies",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    let mut by_level: BTreeMap<usize, Vec<&CellResult>> = BTreeMap::new();
    for c in run.cells() {
        by_level.entry(c.concurrency).or_default().push(c);
    }
    let mut out = Vec::new();
    for (level, cs) in by_level {
        let kind = |c: &CellResult| c.strategy.split(':').next().unwrap_or("").to_string();
        let cap = |c: &CellResult| c.connection_cap.unwrap_or(level).min(level);
        let mut kinds: Vec<String> = cs.iter().map(|c| kind(c)).collect();
        kinds.sort();
        kinds.dedup();
        let mut caps: Vec<usize> = cs.iter().map(|c| cap(c)).collect();
        caps.sort_unstable();
        caps.dedup();
        if kinds.len() > 1 && caps.len() > 1 {
            let list: Vec<String> = cs
                .iter()
                .map(|c| format!("{} {}", c.strategy, cap(c)))
                .collect();
            out.push(Evidence::run(format!(
                "c={level}: connections usable {}",
                list.join(", ")
            )));
        }
    }
    out
}
