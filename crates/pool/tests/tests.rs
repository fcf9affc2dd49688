//! The pool's integration tests, one binary (it links once): each module
//! one concern, all against the fake connector of `common`.
mod common;

mod cancel;
mod expiry;
mod fifo;
mod multiplex;
mod nested;
mod returned;
mod strategies;
mod stress;
mod timeout;
