//! `tune`'s look at the server's idle close, before the search (nothing
//! else loads the service then): read from its settings, or measured on
//! connections of its own (targets' `server_idle`), its time taken from
//! the budget.
use crate::parse;
use clap::Args;
use poolbench_analysis::tune::Setup;
use poolbench_model::{Plan, ServerIdle, TuneResult};
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct IdleArgs {
    /// Longest idle gap the idle probe holds a connection for, where the
    /// server does not say how long it keeps idle connections (plain
    /// HTTP/1.1): connections idle for gaps up to this (and up to half
    /// of --budget, which the probe's time comes out of) find when the
    /// server closes them.
    #[arg(long, default_value = "2m", value_parser = parse::positive_duration)]
    pub(crate) idle_probe_max: Duration,

    /// Do not measure the server's idle close (its settings are still
    /// read where it has them).
    #[arg(long)]
    pub(crate) no_idle_probe: bool,
}

/// The result the search begins from, with what the server does with
/// idle connections, learned first (before any load, on connections of
/// its own, with up to half the budget); the time that took comes out of
/// `setup`'s budget.
pub(crate) fn skeleton(a: &IdleArgs, base: &Plan, setup: &mut Setup, quiet: bool) -> TuneResult {
    let started = std::time::Instant::now();
    let idle = server_idle(a, base, setup.budget / 2, quiet);
    setup.budget = setup.budget.saturating_sub(started.elapsed());
    let mut skeleton = TuneResult::begin(
        base.target.redacted(),
        setup.load,
        setup.slo.clone(),
        setup.budget.as_secs_f64(),
        setup.families.clone(),
    );
    skeleton.server_idle = idle;
    skeleton
}

/// What the server does with idle connections, or why that is not known;
/// `None` for protocols not looked at. `left`: the most time it may
/// take.
fn server_idle(a: &IdleArgs, plan: &Plan, left: Duration, quiet: bool) -> Option<ServerIdle> {
    let probe = (!a.no_idle_probe).then_some(a.idle_probe_max);
    let read = || -> Result<Option<ServerIdle>, String> {
        let addr = poolbench_targets::resolve(&plan.target).map_err(|e| e.to_string())?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let target = poolbench_targets::AnyTarget::open(
                &plan.target,
                addr,
                &plan.target_options,
                plan.connect_timeout,
            )
            .map_err(|e| e.to_string())?;
            target
                .server_idle(probe, left)
                .await
                .map_err(|e| e.to_string())
        })
    };
    if !quiet && probe.is_some() && plan.target.scheme == "http" {
        eprintln!(
            "idle: how long the server keeps an idle connection (its Keep-Alive header, else measured with gaps up to {:.0} s)",
            a.idle_probe_max.min(left).as_secs_f64()
        );
    }
    match read() {
        Ok(idle) => idle,
        Err(e) => Some(ServerIdle {
            note: Some(format!("could not be read: {e}")),
            ..ServerIdle::default()
        }),
    }
}
