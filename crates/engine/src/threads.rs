//! Load threads with an I/O driver each: one current-thread runtime per
//! thread, as pgbench's `-j` threads each poll their own sockets. A
//! multi-thread runtime has one driver: every socket event passes through
//! the worker that polls it, which then wakes the other worker by futex to
//! share the tasks, and its threads wake every connection's server process
//! in turn, so the kernel spreads those over the cores. Closed-loop workers
//! whose connections follow their holder (`Target::follows_holder`) are
//! dealt over these threads instead: each thread then mostly drives the
//! same few connections, since an idle connection is handed out last in,
//! first out. See bench/log/RESULTS.md for the measurements.
use std::future::Future;
use std::thread::JoinHandle;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// Current-thread runtimes, each parked on its own thread until dropped.
pub(crate) struct LoadThreads {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl LoadThreads {
    /// Start `n` threads (at least one), named after the load runtime.
    pub(crate) fn start(n: usize) -> std::io::Result<LoadThreads> {
        let mut set = LoadThreads {
            handles: Vec::new(),
            stops: Vec::new(),
            threads: Vec::new(),
        };
        for i in 0..n.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (stop, stopped) = oneshot::channel::<()>();
            set.handles.push(runtime.handle().clone());
            set.stops.push(stop);
            set.threads.push(
                std::thread::Builder::new()
                    .name(format!("{}-{i}", crate::cpu::LOAD_THREAD))
                    .spawn(move || {
                        let _ = runtime.block_on(stopped);
                    })?,
            );
        }
        Ok(set)
    }

    /// How many threads there are.
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// Spawn `task` on thread `i` (modulo their number).
    pub(crate) fn spawn<F>(&self, i: usize, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[i % self.handles.len()].spawn(task)
    }
}

impl Drop for LoadThreads {
    fn drop(&mut self) {
        self.stops.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
