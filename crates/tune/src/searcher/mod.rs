//! `tune`'s loop: the probes before any load (probes.rs), then phase 1 measures the service's capacity with one
//! connection per request in flight, phase 2 bisects each family's pool
//! size at the client's load, then the pick and its neighbours are
//! confirmed with repetitions; every failure is waited out (recovery.rs)
//! before the search goes on. Within the budget; the world behind a
//! `Measure` and a `Clock`, so it runs on simulated services in tests.
mod capacity_phase;
mod family;
mod probes;
mod recovery;
mod reference;
mod state;
mod threads;

pub(crate) use state::{end_of_search, keep_finding, EXPECTED};
pub use state::{Ask, Clock, Measure, Ran, Searcher, Setup, WallClock};
pub use threads::keep_threads;

use poolbench_model::TuneResult;

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// The whole search; the result before its conclusions (`conclude`).
    pub fn run(mut self) -> Result<TuneResult, M::Error> {
        let searched = self.search();
        end_of_search(&self.measure, searched, &mut self.result.stopped_early)?;
        self.result.elapsed_s = self.clock.now().as_secs_f64();
        Ok(self.result)
    }

    fn search(&mut self) -> Result<(), M::Error> {
        self.probes()?;
        // Every family skipped before the search (each with its reason):
        // nothing is worth loading the service for.
        let searched = |f: &String| !self.setup.skipped.iter().any(|(s, _)| s == f);
        if self.setup.families.iter().any(searched) {
            self.capacity_phase()?;
        }
        let families = self.setup.families.clone();
        for (i, family) in families.iter().enumerate() {
            if self.stopped() {
                break;
            }
            self.families_left = families.len() - i;
            self.family_phase(family)?;
        }
        Ok(())
    }
}
