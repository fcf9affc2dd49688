//! The binary's tests that load the machine whole: tune's searches, the
//! fleet run, two thousand workers, shards scraped by Prometheus, outages,
//! signals against the grid, the scenarios. Within this binary every test
//! that makes load takes its turn (`turns`), one at a time; scripts/test.sh
//! runs the tune and fleet tests in one lane and the rest in another,
//! beside the other test binaries. None asserts the machine's speed, so
//! none needs the machine to itself.
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
mod tune_rate;
