//! tune's decisions on hand-built points, and its whole loop against
//! simulated services with a simulated clock: no network, no sleeps, in
//! milliseconds. One binary, so it links once. The hand-built cells are
//! the analysis tests' own (support/).
// Shared with the analysis tests, which use the rest of it.
#[allow(dead_code)]
#[path = "../../analysis/tests/support/mod.rs"]
mod support;

mod fleet;
mod rate;
mod rate_sim;
mod tune;
mod tune_answers;
mod tune_failures;
mod tune_loop;
mod tune_probes;
mod tune_threads;
