//! The binary's tests that need the machine to themselves, as each had in
//! a test binary of its own: an outage's throughput before and after,
//! signals timed against the grid, two thousand workers, the scenarios'
//! expectations. A second test binary, so none of `tests` runs beside
//! them (cargo runs test binaries one after another); within it every test
//! that makes load takes its turn (`turns`), so they run one at a time.
mod browser;
mod live_metrics;
mod services;
mod turns;

mod fleet;
mod interrupt;
mod outage;
mod prometheus;
mod scale;
mod scenarios;
mod tune;
mod tune_pipeline;
