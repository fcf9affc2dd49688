//! `--stop-on-slo`: a grid stops climbing a strategy once two cells in a
//! row have broken the SLO; the cells above are not run, and each is kept
//! with the reason. Climbing is the order of increasing concurrency
//! within one strategy (with its size): load is what breaks an SLO, and
//! more load on the same strategy rarely mends it. Pool sizes are not
//! climbed: a pool too small breaks it by waiting, and a larger one may
//! meet it.
//!
//! Two breaches, not one: a single cell may break the SLO on a hiccup of
//! the machine; two in a row are a trend. A cell that met it in between
//! starts the count again.
use crate::plan::{CellSpec, Plan};
use crate::result::{CellResult, SkippedCell};
use crate::slo::Slo;
use crate::StrategySpec;

/// Breaking cells in a row after which a strategy stops climbing.
const BREACHES_TO_STOP: usize = 2;

/// One cell measured: where it stands on its strategy's climb, and the
/// bounds it broke (empty: it met them all).
#[derive(Clone, Debug)]
struct Step {
    strategy: StrategySpec,
    concurrency: usize,
    broke: Vec<String>,
}

/// The climb so far: every cell measured, in the order run.
#[derive(Clone, Debug)]
pub struct SloStop {
    slo: Slo,
    steps: Vec<Step>,
}

impl SloStop {
    fn new(slo: Slo) -> SloStop {
        SloStop {
            slo,
            steps: Vec::new(),
        }
    }

    /// The climb of `plan`, when it asks to stop on its SLO.
    pub fn of(plan: &Plan) -> Option<SloStop> {
        match (plan.stop_on_slo, &plan.slo) {
            (true, Some(slo)) => Some(SloStop::new(slo.clone())),
            _ => None,
        }
    }

    /// Keep what `result` (the measure of `cell`) shows against the SLO.
    pub fn record(&mut self, cell: &CellSpec, result: &CellResult) {
        let broke = self
            .slo
            .checks(result)
            .into_iter()
            .filter(|c| !c.met)
            .map(|c| c.bound)
            .collect();
        self.record_bounds(cell, broke);
    }

    /// Keep the bounds `cell` broke (as [`SloCheck::bound`](crate::SloCheck)
    /// writes them; empty: it met the SLO).
    fn record_bounds(&mut self, cell: &CellSpec, broke: Vec<String>) {
        self.steps.push(Step {
            strategy: cell.strategy,
            concurrency: cell.concurrency,
            broke,
        });
    }

    /// Why `cell` is not to be run, or `None` to run it: the last two
    /// cells measured below it on its strategy's climb both broke the SLO. Judged on the cells below it whatever
    /// order the grid gave them, so an unsorted `-c` is climbed as sorted.
    pub fn skip(&self, cell: &CellSpec) -> Option<SkippedCell> {
        let mut below: Vec<&Step> = self
            .steps
            .iter()
            .filter(|s| s.strategy == cell.strategy && s.concurrency < cell.concurrency)
            .collect();
        below.sort_by_key(|s| s.concurrency);
        let last = below.get(below.len().checked_sub(BREACHES_TO_STOP)?..)?;
        if last.iter().any(|s| s.broke.is_empty()) {
            return None;
        }
        Some(SkippedCell {
            strategy: cell.strategy.to_string(),
            concurrency: cell.concurrency,
            pool_size: cell.strategy.size(),
            reason: reason(&cell.strategy, last),
        })
    }
}

/// `pool:24 broke p99 < 50.0 ms at c=64 and c=128`: each bound once, in
/// the order first broken.
fn reason(strategy: &StrategySpec, broke: &[&Step]) -> String {
    let mut bounds: Vec<&str> = Vec::new();
    for b in broke.iter().flat_map(|s| &s.broke) {
        if !bounds.contains(&b.as_str()) {
            bounds.push(b);
        }
    }
    let at: Vec<String> = broke
        .iter()
        .map(|s| format!("c={}", s.concurrency))
        .collect();
    format!(
        "{strategy} broke {} at {}",
        bounds.join(", "),
        at.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(strategy: &str, concurrency: usize) -> CellSpec {
        CellSpec {
            strategy: strategy.parse().unwrap(),
            concurrency,
        }
    }

    /// Run `order` as the engine does: each cell skipped or measured, a
    /// measured one breaking the bounds `broke` gives it. The labels of
    /// the cells skipped, with their reasons.
    fn climb(order: &[CellSpec], broke: impl Fn(&CellSpec) -> Vec<&'static str>) -> Vec<String> {
        let mut stop = SloStop::new(Slo::default());
        let mut skipped = Vec::new();
        for cell in order {
            match stop.skip(cell) {
                Some(s) => skipped.push(format!("{}: {}", s.label(), s.reason)),
                None => {
                    let bounds = broke(cell).into_iter().map(String::from).collect();
                    stop.record_bounds(cell, bounds);
                }
            }
        }
        skipped
    }

    /// `-c 8,16,…` concurrency-major, as `Plan::cells` orders the grid.
    fn grid(strategies: &[&str], levels: &[usize]) -> Vec<CellSpec> {
        levels
            .iter()
            .flat_map(|&c| strategies.iter().map(move |s| cell(s, c)))
            .collect()
    }

    const P99: &str = "p99 < 50.0 ms";

    #[test]
    fn two_breaches_in_a_row_skip_the_cells_above() {
        let order = grid(&["pool:24"], &[8, 16, 32, 64, 128, 256, 512]);
        let skipped = climb(&order, |c| match c.concurrency >= 64 {
            true => vec![P99],
            false => vec![],
        });
        assert_eq!(
            skipped,
            [
                "pool:24 c=256: pool:24 broke p99 < 50.0 ms at c=64 and c=128",
                "pool:24 c=512: pool:24 broke p99 < 50.0 ms at c=64 and c=128",
            ]
        );
    }

    #[test]
    fn one_breach_or_none_runs_everything() {
        let order = grid(&["pool:4"], &[1, 2, 4, 8]);
        assert!(climb(&order, |_| vec![]).is_empty());
        // Only the top cell breaks: nothing is above it.
        assert!(climb(&order, |c| match c.concurrency {
            8 => vec![P99],
            _ => vec![],
        })
        .is_empty());
        // Only the last two break: they are the top.
        assert!(climb(&order, |c| match c.concurrency >= 4 {
            true => vec![P99],
            false => vec![],
        })
        .is_empty());
    }

    #[test]
    fn a_cell_meeting_the_slo_in_between_starts_the_count_again() {
        // c=2 broke on a hiccup, c=4 met it, c=8 and c=16 broke.
        let order = grid(&["pool:4"], &[1, 2, 4, 8, 16, 32]);
        let skipped = climb(&order, |c| match c.concurrency {
            2 | 8 | 16 => vec![P99],
            _ => vec![],
        });
        assert_eq!(
            skipped,
            ["pool:4 c=32: pool:4 broke p99 < 50.0 ms at c=8 and c=16"]
        );
    }

    #[test]
    fn each_strategy_climbs_on_its_own() {
        // pool:4 breaks from c=16, pool:64 never: only pool:4 stops.
        let order = grid(&["pool:4", "pool:64", "shared"], &[8, 16, 32, 64]);
        let skipped = climb(&order, |c| {
            match (c.strategy.to_string().as_str(), c.concurrency) {
                ("pool:4", n) if n >= 16 => vec![P99],
                ("shared", n) if n >= 8 => vec!["errors < 1.00%"],
                _ => vec![],
            }
        });
        assert_eq!(
            skipped,
            [
                "shared c=32: shared broke errors < 1.00% at c=8 and c=16",
                "pool:4 c=64: pool:4 broke p99 < 50.0 ms at c=16 and c=32",
                "shared c=64: shared broke errors < 1.00% at c=8 and c=16",
            ]
        );
    }

    #[test]
    fn the_reason_names_every_bound_broken_once() {
        let order = grid(&["pool:8"], &[1, 2, 4]);
        let skipped = climb(&order, |c| match c.concurrency {
            1 => vec![P99],
            _ => vec![P99, "errors < 1.00%"],
        });
        assert_eq!(
            skipped,
            ["pool:8 c=4: pool:8 broke p99 < 50.0 ms, errors < 1.00% at c=1 and c=2"]
        );
    }

    #[test]
    fn an_unsorted_grid_is_climbed_in_increasing_concurrency() {
        // -c 64,8,16,32: c=64 runs first, with nothing below it measured;
        // c=32 has c=8 and c=16 below it, both broken.
        let order = grid(&["pool:4"], &[64, 8, 16, 32]);
        let skipped = climb(&order, |c| match c.concurrency >= 8 {
            true => vec![P99],
            false => vec![],
        });
        assert_eq!(
            skipped,
            ["pool:4 c=32: pool:4 broke p99 < 50.0 ms at c=8 and c=16"]
        );
    }

    #[test]
    fn pool_sizes_are_not_climbed() {
        // One concurrency, pool sizes rising: each size is its own strategy.
        let order = grid(&["pool:2", "pool:4", "pool:8", "pool:16"], &[64]);
        assert!(climb(&order, |_| vec![P99]).is_empty());
    }
}
