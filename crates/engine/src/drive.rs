//! Driving a cell's load to its end: the open loop's senders or
//! the closed loop's workers, drained within a hard stop, a stop request
//! ending them at once.
use crate::closed;
use crate::exchange::Shared;
use crate::open;
use crate::schedule::{Schedule, Share};
use crate::thread_recorders::ThreadRecorders;
use crate::threads::LoadThreads;
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
    /// Requests at the schedule's times, each load thread sending its
    /// share (on this runtime when there are none).
    pub(crate) async fn open(self, schedule: Schedule, threads: Option<&LoadThreads>) -> Drained {
        let n = threads.map_or(1, LoadThreads::len);
        let cap = open::Cap::new(self.concurrency);
        let hard_stop = self.hard_stop.into_std();
        let handles: Vec<_> = (0..n)
            .map(|k| {
                let share = Share::new(schedule.clone(), k, n);
                let sender = open::sender(
                    self.shared.clone(),
                    self.recorders.clone(),
                    share,
                    cap.clone(),
                    hard_stop,
                );
                match threads {
                    Some(t) => t.spawn(k, sender),
                    None => tokio::spawn(sender),
                }
            })
            .collect();
        let mut drained = Drained {
            unfinished: 0,
            dropped: 0,
        };
        for h in handles {
            // A sender ends by itself at the hard stop or a stop request.
            if let Ok(sent) = h.await {
                drained.unfinished += sent.unfinished;
                drained.dropped += sent.dropped;
            }
        }
        drained
    }

    /// `concurrency` workers, on the load threads where given.
    pub(crate) async fn closed(self, threads: Option<&LoadThreads>) -> Drained {
        let loops = match &self.shared.line {
            Some(line) => line.runners,
            None => self.concurrency,
        };
        let handles: Vec<_> = (0..loops)
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
        if let Some(line) = &self.shared.line {
            let mut gave_up = line.gave_up_by(self.shared.end);
            self.shared.gave_up(&self.recorders, &mut gave_up);
        }
        Drained {
            unfinished,
            dropped: 0,
        }
    }
}
