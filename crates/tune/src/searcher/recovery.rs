//! After a failing point, the service is waited out before anything else
//! is measured: one-request pings, each waited for (a request given up on
//! stays queued inside a frozen service and feeds its freeze), until it
//! answers as it did alone, then
//! a level that was healthy before measured again and compared with its
//! first measurement (a circuit breaker's half-open probing). A service
//! that does not come back within `--recovery` ends the search.
use super::state::{Ask, Clock, Measure, Searcher};
use crate::capacity::capacity_points;
use crate::point::failure;
use crate::verdict::tie;
use poolbench_model::{StrategySpec, TunePhase, TunePoint};
use std::time::Duration;

/// Share of its first throughput a healthy level must reach again.
const AGAIN_SHARE: f64 = 0.75;
/// Least time between two pings.
const PING_GAP: Duration = Duration::from_millis(500);

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// Wait out a failed point; give up (and say why) if the service does
    /// not recover within `--recovery`.
    pub(crate) fn recover_if_failed(&mut self, p: &TunePoint) -> Result<(), M::Error> {
        let slo = self.setup.slo.clone();
        let Some(why) = failure(p, slo.as_ref(), self.stall_s()) else {
            return Ok(());
        };
        let began = self.clock.now();
        let failed = format!("{} at {} in flight: {why}", p.strategy, p.in_flight);
        self.measure.waiting(&failed, self.setup.recovery);
        let recovered = self.wait_for_recovery()?;
        self.waited += self.clock.now().saturating_sub(began);
        if !recovered && !self.measure.interrupted() {
            self.gave_up = true;
            let verb = match why.froze() {
                true => "froze",
                false => "failed",
            };
            self.result.stopped_early = Some(format!(
                "the service {verb} at {} in flight ({}: {why}) and had not recovered {} later",
                p.in_flight,
                p.strategy,
                seconds(self.setup.recovery)
            ));
        }
        Ok(())
    }

    /// Pings until the service answers alone as before and a level that
    /// was healthy is healthy again; `false` if that never came.
    fn wait_for_recovery(&mut self) -> Result<bool, M::Error> {
        let until = self.clock.now() + self.setup.recovery;
        while self.clock.now() < until && !self.measure.interrupted() {
            let t0 = self.clock.now();
            // One request, waited for as long as the recovery has left.
            let window = until.saturating_sub(t0).max(PING_GAP);
            let ping = Ask::ping(window, self.threads);
            let ping = self.run_ask(&ping, (1, 1))?;
            if self.answers_alone(&ping) && self.healthy_again()? {
                return Ok(true);
            }
            let spent = self.clock.now().saturating_sub(t0);
            if spent < PING_GAP && self.clock.now() < until {
                self.clock.sleep(PING_GAP - spent);
            }
        }
        Ok(false)
    }

    /// One request at a time answers, without errors, within ten times
    /// what one alone took (and 20 ms more): not frozen any more. Whether
    /// it is as fast as before is for [`Self::healthy_again`] to measure;
    /// a Python service can answer 10x slower for minutes after a freeze
    /// (FastAPI at its defaults: 20 ms against 1.6 ms), and the old 3x bar
    /// read that as no recovery at all.
    fn answers_alone(&self, ping: &TunePoint) -> bool {
        let alone = self.result.capacity.service_time_us;
        failure(ping, None, self.stall_s().max(0.3)).is_none()
            && ping.requests > 0
            && alone.is_none_or(|s| ping.mean_us <= 10.0 * s + 20_000.0)
    }

    /// The knee (or the fewest in flight measured) measured again: healthy,
    /// and near its first throughput (or tied with it).
    fn healthy_again(&mut self) -> Result<bool, M::Error> {
        let Some(first) = self.reference() else {
            return Ok(true);
        };
        let window = self.window();
        let again = self.run_point(
            TunePhase::Recovery,
            StrategySpec::Pool(Some(first.in_flight)),
            first.in_flight,
            (1, 2),
            window,
        )?;
        let slo = self.setup.slo.clone();
        Ok(failure(&again, slo.as_ref(), self.stall_s()).is_none()
            && (again.throughput_rps >= AGAIN_SHARE * first.throughput_rps || tie(&again, &first)))
    }

    /// A level that was healthy before: the knee's first good measurement,
    /// or the fewest in flight that did not fail.
    fn reference(&self) -> Option<TunePoint> {
        let slo = self.setup.slo.as_ref();
        let stall_s = self.stall_s();
        let good = |p: &&TunePoint| {
            p.phase == TunePhase::Capacity && failure(p, slo, stall_s).is_none() && p.requests > 0
        };
        let knee = self.result.capacity.knee_in_flight;
        self.result
            .points
            .iter()
            .filter(good)
            .find(|p| Some(p.in_flight) == knee)
            .or_else(|| capacity_points(&self.result.points).into_iter().find(good))
            .cloned()
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.0} s", d.as_secs_f64())
}
