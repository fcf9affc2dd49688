//! What the search asks the server before any load: its own connection
//! limit (`--replicas`), whether it answers pipelined requests (`-s
//! pipeline`), and what it does with idle connections. Each goes through
//! the same [`Measure`] as a point and its time is billed by the same
//! [`Clock`], so the budget is charged in one place and every probe runs
//! against a simulated service in the tests.
use super::state::{Clock, Measure, Searcher};
use crate::probe::{pipeline_depth, IdleLook, IDLE_SHARE};
use poolbench_model::{ServerIdle, TuneLoad};

impl<M: Measure, C: Clock> Searcher<M, C> {
    /// Every probe asked for, in order: the limit (it may stop the search
    /// before any load), pipelining, the idle close.
    pub(crate) fn probes(&mut self) -> Result<(), M::Error> {
        let probes = self.setup.probes.clone();
        if probes.server_limit && self.result.fleet.is_some() {
            let limit = self.measure.server_limit()?;
            if let Some(fleet) = self.result.fleet.as_mut() {
                fleet.server_limit = limit;
            }
        }
        if let (Some(timeout), TuneLoad::Concurrency(c)) = (probes.pipeline, self.setup.load) {
            let depth = pipeline_depth(c);
            if let Err(e) = self.measure.pipelining(depth, timeout) {
                let why = format!(
                    "the server does not answer pipelined requests ({depth} written ahead on one connection: {e}); a pool of connections is the way to this server"
                );
                self.setup.skipped.push(("pipeline".into(), why));
            }
        }
        if let Some(look) = probes.idle {
            self.result.server_idle = self.idle_close(look);
        }
        Ok(())
    }

    /// What the server says of idle connections; measured only where it
    /// says nothing and measuring is allowed, within its share of the
    /// budget.
    fn idle_close(&mut self, look: IdleLook) -> Option<ServerIdle> {
        let said = match self.measure.server_idle(None, self.left(IDLE_SHARE)) {
            Ok(Some(idle)) if idle.source == ServerIdle::NOT_SAID => idle,
            Ok(other) => return other,
            Err(e) => return Some(unread(e)),
        };
        let Some(max) = look.measure_up_to else {
            return Some(said);
        };
        let left = self.left(IDLE_SHARE);
        self.measure
            .server_idle(Some(max.min(left)), left)
            .unwrap_or_else(|e| Some(unread(e)))
    }
}

fn unread(e: String) -> ServerIdle {
    ServerIdle {
        note: Some(format!("could not be read: {e}")),
        ..ServerIdle::default()
    }
}
