//! The analysis on hand-built results: each finding on both sides of its
//! threshold, the recommendation, SLO breaches, the USL fit, `analyze`
//! itself, merges and ramp summaries. No network, no sleeps: every figure
//! is set by the test (support/mod.rs builds the cells). One binary, so
//! it links once.
mod support;

mod analyze;
mod baseline;
mod census;
mod delayed_ack;
mod failure_findings;
mod generator_findings;
mod head_of_line;
mod idle_reuse;
mod load_findings;
mod merge;
mod pool_beyond_client;
mod pool_bound;
mod ramp;
mod recommend;
mod slo;
mod tls_handshake;
mod transaction_pooler;
mod usl;
