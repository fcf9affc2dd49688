//! Driving a cell's load to its end: the open loop's paced requests or
//! the closed loop's workers, drained within a hard stop, a stop request
//! ending them at once.
use crate::closed;
use crate::exchange::Shared;
use crate::open;
use crate::schedule::Schedule;
use crate::thread_recorders::ThreadRecorders;
use crate::threads::LoadThreads;
use poolbench_pool::BuildError;
use poolbench_targets::Target;
use std::sync::Arc;
use tokio::time::timeout_at;

/// The load of one cell run, and when to give up on requests in flight.
pub(crate) struct Drive<T: Target + Clone> {
    pub(crate) shared: Arc<Shared<T>>,
    pub(crate) recorders: Arc<ThreadRecorders>,
    /// Closed-loop workers, or the open loop's cap on requests in flight.
    pub(crate) concurrency: usize,
    pub(crate) hard_stop: tokio::time::Instant,
}

/// What was left when the load stopped.
pub(crate) struct Drained {
    /// Requests (or workers) still in flight at the hard stop.
    pub(crate) unfinished: u64,
    /// Open loop: requests never sent, too far behind schedule.
    pub(crate) dropped: u64,
}

impl<T: Target + Clone> Drive<T> {
    /// Requests at the schedule's times, from a pacing thread of its own.
    pub(crate) async fn open(self, schedule: Schedule) -> Result<Drained, BuildError> {
        let handle = tokio::runtime::Handle::current();
        let paced = open::start(
            self.shared,
            self.recorders,
            schedule,
            self.concurrency,
            handle,
        )
        .map_err(|e| BuildError::Library(format!("cannot start the pacing thread: {e}")))?;
        let mut drained = Drained {
            unfinished: 0,
            dropped: 0,
        };
        if let Ok(mut paced) = paced.await {
            drained.dropped = paced.dropped;
            loop {
                tokio::select! {
                    next = timeout_at(self.hard_stop, paced.inflight.join_next()) => {
                        if !matches!(next, Ok(Some(_))) {
                            break;
                        }
                    }
                    _ = crate::interrupt::wait() => break,
                }
            }
            drained.unfinished = paced.inflight.len() as u64;
            paced.inflight.shutdown().await;
        }
        Ok(drained)
    }

    /// `concurrency` workers, on the load threads where given.
    pub(crate) async fn closed(self, threads: Option<&LoadThreads>) -> Drained {
        let handles: Vec<_> = (0..self.concurrency)
            .map(|id| {
                let worker = closed::worker(self.shared.clone(), id, self.recorders.clone());
                match threads {
                    Some(t) => t.spawn(id, worker),
                    None => tokio::spawn(worker),
                }
            })
            .collect();
        // A stop request ends every worker at once, its request
        // abandoned (a lease dropped gives its connection back).
        let aborts: Vec<_> = handles.iter().map(|h| h.abort_handle()).collect();
        let stopper = tokio::spawn(async move {
            crate::interrupt::wait().await;
            aborts.iter().for_each(|a| a.abort());
        });
        let mut unfinished = 0;
        for mut h in handles {
            match timeout_at(self.hard_stop, &mut h).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => unfinished += 1,
                Err(_) => {
                    h.abort();
                    let _ = h.await;
                    unfinished += 1;
                }
            }
        }
        stopper.abort();
        Drained {
            unfinished,
            dropped: 0,
        }
    }
}
