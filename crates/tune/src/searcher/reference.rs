//! The reference of one family's pool search: the client's load (below the
//! cliff, within the search's most), or the level where the capacity
//! search read its peak, below that load, when paired rounds say the peak
//! carries more. The capacity search measures each level once, minutes
//! apart, so a fall past its peak may be the machine's: nginx at c=100
//! read 178k req/s at 6 in flight, measured last, against 142-149k from 8
//! to 128, and a reference of 6 then passed pool:4, which a grid read at
//! 0.82× of its best. And a plateau's best may lie below the load: nginx
//! read 170-176k from 14 to 46 and 160k at 100, so against 100 the 5%
//! line fell to where the grid read 0.86× of its best.
use super::state::{Clock, Measure, Searcher};
use crate::capacity::capacity_points;
use crate::pool_search::verdicts;
use crate::verdict::WITHIN_BEST;
use poolbench_model::{StrategySpec, TunePhase};

/// Below this share of the peak, a capacity level past it fell further
/// than the machine's drift moves one run (20-60% on a busy 2-core
/// machine, rarely a quarter between two levels): the reference moves to
/// the peak without paired rounds (FastAPI's blocked event loop read a
/// third of its peak at 8 in flight). The fit leaves such a fall out too.
const FELL: f64 = 0.75;

/// Without time for paired rounds, a fall below this share of the peak
/// moves the reference to it.
const UNPAIRED_FALL: f64 = 0.9;

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// The largest pool worth trying, `family`'s reference: the client's
    /// load, or the capacity peak's level below it where a level between
    /// read under [`FELL`] of the peak, or where the peak, compared with
    /// the load in paired rounds, carried at least 1 ÷ 0.95 of it (or the
    /// load broke the bounds). That comparison stays among the load's when
    /// the load remains the reference: it judged one size.
    pub(super) fn settle_reference(
        &mut self,
        family: &str,
        spec: StrategySpec,
        in_flight: usize,
    ) -> Result<usize, M::Error> {
        let load = self.load_upper(in_flight);
        let Some((peak, lowest)) = self.peak_below(load) else {
            return Ok(load);
        };
        if lowest < FELL {
            return Ok(peak);
        }
        if self.stopped() || self.left(1.0) < self.compare_cost(2) + self.reserve() {
            return Ok(if lowest < UNPAIRED_FALL { peak } else { load });
        }
        if self
            .compare(family, spec, peak, load, TunePhase::Pool)?
            .is_some()
        {
            return Ok(peak);
        }
        let ratio = self
            .result
            .comparisons
            .last()
            .and_then(|c| verdicts(&[c], &[]).first().map(|v| v.ratio))
            .unwrap_or(0.0);
        Ok(if ratio * WITHIN_BEST >= 1.0 {
            peak
        } else {
            load
        })
    }

    /// The client's load, below the cliff, within the search's most.
    fn load_upper(&self, in_flight: usize) -> usize {
        let below_cliff = self
            .result
            .capacity
            .cliff_in_flight
            .map_or(usize::MAX, |c| c.saturating_sub(1));
        in_flight.min(below_cliff).min(self.setup.most_in_flight)
    }

    /// The capacity peak's level when it lies below `load`, with the
    /// lowest share of the peak a level past it, up to `load`, read (1
    /// with none between).
    fn peak_below(&self, load: usize) -> Option<(usize, f64)> {
        let cap = &self.result.capacity;
        let (peak, best) = (cap.max_rps_in_flight, cap.max_rps);
        if peak == 0 || peak >= load || best <= 0.0 {
            return None;
        }
        let lowest = capacity_points(&self.result.points)
            .into_iter()
            .filter(|p| p.in_flight > peak && p.in_flight <= load)
            .map(|p| p.throughput_rps / best)
            .fold(1.0, f64::min);
        Some((peak, lowest))
    }
}
