//! How many load threads the search measures with: one, or one per core.
//! On a machine the generator shares with the service, a load thread more
//! than the load needs takes a core's share from the service, and every
//! point then swings with where the scheduler put the threads (nginx with
//! one worker on 2 cores: 80,000 to 140,000 req/s from one run to the next
//! with two load threads, 145,000 ±2% with one). The search starts with
//! one; at the first capacity level with at least two requests in flight
//! per core where that thread is busy, or else at the client's own load
//! where it is not idle, one thread and one per core are compared, paired
//! (A B A B), and more threads are kept only when they carry at least 5%
//! more. One thread kept at a low level is compared again at the client's
//! load, once: a thread that keeps up with 4 in flight may not with 100
//! (nginx at c=100: one thread's points 15-25% under two's from 16 in
//! flight). More threads kept then measure again every level above the
//! first comparison.
use super::state::{Ask, Clock, Measure, Searcher};
use poolbench_model::{GeneratorThreads, StrategySpec, TunePhase, TunePoint};

/// Share of one core at which the one thread counts as busy.
const BUSY: f64 = 0.5;
/// At the client's load, the share of one core below which the thread
/// counts as idle. One thread can fall behind before it is busy: with 64
/// PostgreSQL backends waking on 2 cores (`pg_sleep(0.005)`), one thread
/// at 0.42 of a core carried 0.8x what two did, and the lag showed only
/// in the latency it measured (mean 8.0 ms against a median of 5.2).
const IDLE: f64 = 0.25;
/// More threads must carry this much more than one to be kept.
const MORE_BY: f64 = 1.05;

/// The load threads to keep after a paired comparison: `many` when the
/// mean of its runs' throughputs carries at least 5% more than one
/// thread's, else one. `tune`'s search decides so, and `run` too when it
/// compares the two before its cells (`crates/cli/src/run_threads.rs`).
pub fn keep_threads(one_rps: &[f64], many: usize, many_rps: &[f64]) -> usize {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    match !many_rps.is_empty() && mean(many_rps) >= MORE_BY * mean(one_rps) {
        true => many,
        false => 1,
    }
}
/// Runs of each in the paired comparison.
const ROUNDS: usize = 2;
/// Errors above this share leave the level out of the comparison.
const ERRORS: f64 = 0.01;

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// After capacity `point`, the last of the points (measured with one
    /// thread; `at_load`: at the client's own load): compare one thread
    /// with one per core if it is due; `true` when more threads were
    /// kept: the points they must measure again (the point, and after a
    /// second comparison every level above the first) are taken out.
    pub(crate) fn choose_threads(
        &mut self,
        point: &TunePoint,
        at_load: bool,
    ) -> Result<bool, M::Error> {
        let (Some(many), Some(1)) = (self.setup.compare_threads, self.threads) else {
            return Ok(false);
        };
        let cores = point.generator_cpu.map_or(0.0, |c| c * many as f64);
        let busy = cores >= BUSY || (at_load && cores >= IDLE);
        // Errors and stalls only: `failure()` also counts fewer in flight
        // than asked, which is what one busy thread looks like.
        let healthy =
            point.requests > 0 && point.error_rate <= ERRORS && point.stalled_s < self.stall_s();
        let first = self.result.generator_threads.as_ref().map(|g| g.in_flight);
        let due = match first {
            None => point.in_flight >= 2 * many,
            // Once more at the client's load, above where one was kept.
            Some(at) => at_load && at < point.in_flight,
        };
        if !(due && busy && healthy) || self.left(1.0) < self.run_cost() * (2 * ROUNDS as u32 + 8) {
            return Ok(false);
        }
        let level = point.in_flight;
        let ask = |threads| Ask {
            threads: Some(threads),
            ..self.ask(TunePhase::Capacity, StrategySpec::Pool(Some(level)), level)
        };
        let (one_ask, many_ask) = (ask(1), ask(many));
        let (mut one, mut more, mut rounds) = (0.0, 0.0, 0);
        while rounds < ROUNDS && !self.measure.interrupted() {
            more += self.run_once(&many_ask)?.throughput_rps;
            one += self.run_once(&one_ask)?.throughput_rps;
            rounds += 1;
        }
        if rounds == 0 {
            return Ok(false);
        }
        let (one, more) = (one / rounds as f64, more / rounds as f64);
        let threads = keep_threads(&[one], many, &[more]);
        self.result.generator_threads = Some(GeneratorThreads {
            threads,
            in_flight: level,
            one_rps: one,
            many,
            many_rps: more,
        });
        self.threads = Some(threads);
        if threads == 1 {
            return Ok(false);
        }
        let above = first.unwrap_or(level - 1);
        self.result
            .points
            .retain(|p| p.phase != TunePhase::Capacity || p.in_flight <= above);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::keep_threads;

    #[test]
    fn more_threads_are_kept_only_for_five_percent_more() {
        assert_eq!(keep_threads(&[100.0, 100.0], 2, &[106.0, 104.0]), 2);
        assert_eq!(keep_threads(&[100.0, 100.0], 2, &[104.0, 104.0]), 1);
        assert_eq!(
            keep_threads(&[133_026.0, 164_258.0], 2, &[106_680.0, 104_454.0]),
            1
        );
        assert_eq!(keep_threads(&[100.0], 2, &[]), 1);
        assert_eq!(keep_threads(&[0.0], 4, &[1.0]), 4);
    }
}
