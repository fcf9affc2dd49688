//! The built-in server's integration tests, one binary (it links once):
//! each module one concern, most against a server on 127.0.0.1:0 from
//! `common`.
mod common;

mod config;
mod connections;
mod delay;
mod embedded;
mod knobs;
mod protocols;
mod stall;
mod stats_endpoint;
mod tls;
