//! `tune`'s look at the server's idle close, before the search (nothing
//! else loads the service then): read from its settings, or measured on
//! connections of its own (targets' `server_idle`), its time taken from
//! the budget.
use crate::idle_args::IdleArgs;
use crate::tune_args::TuneArgs;
use poolbench_model::{Plan, ServerIdle, TuneResult};
use poolbench_server::ServerConfig;
use poolbench_tune::Setup;
use std::time::Duration;

/// The result the search begins from, with what the server does with
/// idle connections, learned first (before any load, on connections of
/// its own, with up to a quarter of the budget); the time that took comes out of
/// `setup`'s budget.
pub(crate) fn skeleton(a: &TuneArgs, base: &Plan, setup: &mut Setup, embedded: bool) -> TuneResult {
    let started = std::time::Instant::now();
    let idle = match embedded {
        // Its keep-alive is known: nothing to read or measure.
        true => Some(ServerIdle {
            idle_close_s: Some(ServerConfig::default().keepalive_timeout.as_secs_f64()),
            source: "the built-in server's keep-alive timeout".into(),
            ..ServerIdle::default()
        }),
        false => server_idle(&a.idle, base, setup.budget / 4, a.quiet),
    };
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
    let probe = (!a.no_idle_probe).then_some(a.idle_probe_max.min(left));
    // What the server says first; measured only where it says nothing.
    let said = match read(plan, None, left) {
        Ok(Some(idle)) if idle.source == ServerIdle::NOT_SAID => idle,
        Ok(other) => return other,
        Err(e) => return Some(unread(e)),
    };
    let Some(max) = probe else { return Some(said) };
    if !quiet {
        eprintln!(
            "idle: the server does not say how long it keeps an idle connection; measuring (gaps up to {:.0} s)",
            max.as_secs_f64()
        );
    }
    read(plan, Some(max), left).unwrap_or_else(|e| Some(unread(e)))
}

fn unread(e: String) -> ServerIdle {
    ServerIdle {
        note: Some(format!("could not be read: {e}")),
        ..ServerIdle::default()
    }
}

/// The target's `server_idle`, on a runtime of its own.
fn read(
    plan: &Plan,
    probe: Option<Duration>,
    left: Duration,
) -> Result<Option<ServerIdle>, String> {
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
}
