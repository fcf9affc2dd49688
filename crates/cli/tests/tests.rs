//! The binary's integration tests, one test binary (it links once) beside
//! `alone` (tests/alone.rs): each module one concern, most running
//! `poolbench` itself. `support` drives servers written in Python,
//! `services` the real PostgreSQL, Redis, MariaDB and nginx that scripts/test.sh
//! starts; tests that time what they measure or load the whole machine
//! take turns (`turns`).
mod browser;
mod live_metrics;
mod services;
mod support;
mod toxiproxy;
mod turns;

mod bad_input;
mod bad_input_matrix;
mod census;
mod client_certs;
mod client_check;
mod commands;
mod compare;
mod compare_rates;
mod compare_tunes;
mod compat;
mod database_access;
mod databases;
mod delayed_ack;
mod docs;
mod faults;
mod faults_nginx;
mod faults_tune;
mod findings;
mod formats;
mod grpc_calls;
mod h2_cross;
mod hostile;
mod html_report;
mod idle;
mod junit;
mod kubernetes;
mod merge;
mod metrics;
mod mysql;
mod nginx;
mod packaging;
mod pipelining;
mod poolers;
mod ramp;
mod requests;
mod service;
mod shards;
mod slo;
mod sources;
mod tls_nginx;
