//! The recommendation: the strategy and pool size worth using, or why the
//! run cannot name one.
use crate::findings::check::ms;
use crate::findings::transaction_pooler;
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, Recommendation, RunResult, StrategySpec};

/// Most errors a cell may have and still be recommended.
const RECOMMEND_MAX_ERRORS: f64 = 0.01;

/// The smallest connection cap whose throughput is within 5% of the peak
/// and whose p99 is within 20% of the best, at the highest concurrency,
/// among cells that failed at most 1% of requests and never stalled. None
/// when every such cell is at the closed-loop ceiling (`findings` must be
/// in `result`): no strategy was the limit, so the run cannot rank them.
/// Otherwise, why not. With an SLO, the highest concurrency where some
/// cell meets it, and only such cells.
pub fn recommend(result: &RunResult) -> Result<Recommendation, String> {
    let meets = |c: &&CellResult| c.slo_breaches.as_ref().is_none_or(|b| b.is_empty());
    if result.cells.is_empty() {
        return Err("no cells were run".into());
    }
    if transaction_pooler::found(result) {
        return Err(
            "prepared statements failed: a transaction-pooling proxy sits in between \
             (each transaction may go to another server connection), so the figures mix \
             protocol failures with the service's; use --query-mode extended or simple"
                .into(),
        );
    }
    let level = result
        .cells
        .iter()
        .filter(meets)
        .map(|c| c.concurrency)
        .max()
        .ok_or("no cell meets the SLO (each cell's breaches are in the JSON's slo_breaches)")?;
    let at_level: Vec<&CellResult> = result
        .cells
        .iter()
        .filter(|c| c.concurrency == level)
        .collect();
    let mut refused = Vec::new();
    let cells: Vec<&CellResult> = at_level
        .iter()
        .copied()
        .filter(|c| match refusal(c) {
            Some(why) => {
                refused.push(format!("{} {why}", c.strategy));
                false
            }
            None => true,
        })
        .collect();
    if cells.is_empty() {
        let slo = match at_level.iter().any(|c| c.slo_breaches.is_some()) {
            true => "broke the SLO, ",
            false => "",
        };
        return Err(format!(
            "every cell at c={level} {slo}failed more than 1% of its requests or stalled ({})",
            refused.join(", ")
        ));
    }
    if cells.iter().all(|c| at_ceiling(result, c)) {
        return Err(format!(
            "at c={level} every cell is at the closed-loop ceiling (c ÷ service time): \
             no strategy limited throughput, so the run cannot tell them apart; \
             raise -c until throughput stops growing, or use --rate"
        ));
    }
    let pick = Pick::of(&cells, level)?;
    if let Some(why) = bound_at_largest_pool(result, pick.cell) {
        return Err(why);
    }
    let skipped = if refused.is_empty() {
        String::new()
    } else {
        format!("; not considered: {}", refused.join(", "))
    };
    Ok(pick.recommendation(result, level, &skipped))
}

/// Why a cell cannot be recommended, if it cannot.
fn refusal(c: &CellResult) -> Option<String> {
    let broke = c.slo_breaches.as_deref().unwrap_or_default();
    if !broke.is_empty() {
        Some(format!("breaks the SLO: {}", broke.join(", ")))
    } else if c.ok == 0 {
        Some("nothing succeeded".to_string())
    } else if c.error_rate() > RECOMMEND_MAX_ERRORS {
        Some(format!("{:.0}% errors", c.error_rate() * 100.0))
    } else if !c.stalls.is_empty() {
        Some("stalled".to_string())
    } else {
        None
    }
}

/// When the run's `pool-bound` finding names `c` and its pool is the
/// largest of its kind the run tried, why `c` is no answer: a larger pool,
/// never tried, would have served more.
fn bound_at_largest_pool(result: &RunResult, c: &CellResult) -> Option<String> {
    let size = c.pool_size?;
    let label = c.label();
    let bound = result
        .findings
        .iter()
        .any(|p| p.id == Id::PoolBound && p.cells.contains(&label));
    let kind = |s: &str| s.parse::<StrategySpec>().ok().map(|s| s.kind());
    let largest = result
        .cells
        .iter()
        .filter(|o| kind(&o.strategy) == kind(&c.strategy))
        .filter_map(|o| o.pool_size)
        .max();
    (bound && largest == Some(size)).then(|| {
        format!(
            "the best cell had the largest pool tried ({}) and the pool was the bottleneck; \
             raise --pool (or run poolbench tune)",
            c.strategy
        )
    })
}

/// The run's `closed-loop-ceiling` finding names this cell.
fn at_ceiling(result: &RunResult, c: &CellResult) -> bool {
    let l = c.label();
    result
        .findings
        .iter()
        .any(|p| p.id == Id::ClosedLoopCeiling && p.cells.contains(&l))
}

/// The chosen cell, with the figures it was chosen against.
struct Pick<'a> {
    cell: &'a CellResult,
    peak: f64,
    best_p99: f64,
}

impl<'a> Pick<'a> {
    /// The smallest cap within 5% of the peak throughput and 20% of the
    /// best p99 (the higher throughput between equal caps).
    fn of(cells: &[&'a CellResult], level: usize) -> Result<Pick<'a>, String> {
        let peak = cells.iter().map(|c| c.throughput_rps).fold(0.0, f64::max);
        let best_p99 = cells
            .iter()
            .map(|c| c.latency_us.p99)
            .fold(f64::INFINITY, f64::min);
        let cap = |c: &CellResult| c.connection_cap.unwrap_or(level);
        let cell = cells
            .iter()
            .copied()
            .filter(|c| c.throughput_rps >= 0.95 * peak && c.latency_us.p99 <= 1.2 * best_p99)
            .min_by(|a, b| {
                cap(a)
                    .cmp(&cap(b))
                    .then(b.throughput_rps.total_cmp(&a.throughput_rps))
            })
            .ok_or_else(|| {
                format!(
                    "no cell at c={level} is within 5% of the peak throughput and 20% of the best p99"
                )
            })?;
        Ok(Pick {
            cell,
            peak,
            best_p99,
        })
    }

    /// The recommendation, its reason in words.
    fn recommendation(&self, result: &RunResult, level: usize, skipped: &str) -> Recommendation {
        let pick = self.cell;
        // A strategy without a cap (per-request, take-or-create) may open
        // one connection per worker, whatever its size says.
        let connections = match pick.connection_cap {
            Some(cap) => cap.to_string(),
            None => format!(
                "no cap: up to {level}, one per worker; {} open at peak",
                pick.connections.peak_open
            ),
        };
        // Where the law puts this strategy's peak, when the grid let it tell.
        let usl = result
            .scaling
            .iter()
            .find(|u| u.strategy == pick.strategy && u.r2 >= 0.8)
            .and_then(|u| u.peak_concurrency.map(|n| (n, u.peak_throughput)))
            .map(|(n, x)| {
                format!(
                    "; the USL fit peaks at about {n:.0} concurrent ({x:.0} req/s) and falls beyond"
                )
            })
            .unwrap_or_default();
        Recommendation {
            strategy: pick.strategy.clone(),
            pool_size: pick.pool_size,
            concurrency: level,
            why: format!(
                "at c={level}, the fewest connections ({connections}) within 5% of the peak throughput ({:.0} of {:.0} req/s) \
                 and 20% of the best p99 ({} against {}){usl}{skipped}",
                pick.throughput_rps,
                self.peak,
                ms(pick.latency_us.p99),
                ms(self.best_p99)
            ),
        }
    }
}
