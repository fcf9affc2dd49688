//! The engine: runs a [`Plan`] (strategies × concurrency × pool sizes)
//! against a target and returns one [`RunResult`] of what it measured: the
//! closed loop (workers that each wait for their answer), the open loop
//! (arrivals at a rate, latency counted from the intended send time) and
//! batches, on load threads with an I/O driver each, recording every phase
//! of every request (checkout, connect, request, first byte) into HDR
//! histograms and per-bucket timelines. It generates load and records it,
//! nothing else: it never prints (progress goes to an [`Events`] sink the
//! caller supplies), and the findings, the recommendation and the SLO
//! breaches are `poolbench-analysis`'s to add. [`run`] is the entry; the
//! binary's `tune` drives it one point at a time through its `Measure`.
//!
//! [`Plan`]: poolbench_model::Plan
//! [`RunResult`]: poolbench_model::RunResult
#![forbid(unsafe_code)]

mod batch;
mod cell_result;
mod cell_run;
mod checkout;
mod closed;
mod counter_reader;
mod counts;
mod cpu;
mod drive;
mod exchange;
mod hiccup;
mod idle_watch;
pub mod interrupt;
mod intervals;
mod line;
mod live;
mod open;
mod precise_wake;
mod record;
mod runner;
mod schedule;
mod thread_recorders;
mod threads;

pub use counter_reader::CounterReader;
pub use live::Live;
pub use runner::{run, EngineError, Events, NoEvents};
