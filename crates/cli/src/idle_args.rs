//! `tune`'s arguments for the server's idle close (tune_idle.rs).
use crate::parse;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct IdleArgs {
    /// Longest idle gap the idle probe holds a connection for, where the
    /// server does not say how long it keeps idle connections (plain
    /// HTTP/1.1): connections idle for gaps up to this (and up to a quarter
    /// of --budget, which the probe's time comes out of) find when the
    /// server closes them.
    #[arg(long, default_value = "2m", value_parser = parse::positive_duration)]
    pub(crate) idle_probe_max: Duration,

    /// Do not measure the server's idle close (its settings are still
    /// read where it has them).
    #[arg(long)]
    pub(crate) no_idle_probe: bool,
}
