//! The engine's integration tests, one binary (it links once): every run
//! against the built-in server, taking turns (`common::run_with`).
mod common;
mod connections;
mod errors;
mod findings;
mod first_byte;
mod grpc;
mod hiccups;
mod littles_law;
mod live;
mod load_models;
mod open_loop_truth;
mod result_json;
mod saturation;
mod tls_h2;
