//! `tune`'s look at the server's idle close. The search asks for it
//! before any load (`poolbench_tune::Probes::idle`, its time billed to
//! the budget there); this file says what to ask and reads it: from the
//! server's settings, or measured on connections of its own (targets'
//! `server_idle`).
use crate::tune_args::TuneArgs;
use poolbench_model::{Plan, ServerIdle, TuneResult};
use poolbench_server::ServerConfig;
use poolbench_tune::{IdleLook, Setup};
use std::time::Duration;

/// The result the search begins from. The built-in server's keep-alive
/// is known, so nothing is asked of it; any other server is looked at by
/// the search first (`setup.probes.idle`).
pub(crate) fn skeleton(a: &TuneArgs, base: &Plan, setup: &mut Setup, embedded: bool) -> TuneResult {
    let mut skeleton = TuneResult::begin(
        base.target.redacted(),
        setup.load,
        setup.slo.clone(),
        setup.budget.as_secs_f64(),
        setup.families.clone(),
    );
    if embedded {
        skeleton.server_idle = Some(ServerIdle {
            idle_close_s: Some(ServerConfig::default().keepalive_timeout.as_secs_f64()),
            source: "the built-in server's keep-alive timeout".into(),
            ..ServerIdle::default()
        });
    } else {
        setup.probes.idle = Some(IdleLook {
            measure_up_to: (!a.idle.no_idle_probe).then_some(a.idle.idle_probe_max),
        });
    }
    skeleton
}

/// The target's `server_idle`, on a runtime of its own: read from its
/// settings (`probe: None`) or measured with gaps up to `probe`.
pub(crate) fn read(
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
        // A signal ends the look at once (its gaps run up to 30 s); the
        // search then stops before any load and writes what it has.
        tokio::select! {
            idle = target.server_idle(probe, left) => idle.map_err(|e| e.to_string()),
            () = interrupted() => Ok(Some(ServerIdle {
                note: Some("not measured: interrupted".into()),
                ..ServerIdle::default()
            })),
        }
    })
}

/// Resolves once a signal asked the run to stop.
async fn interrupted() {
    while poolbench_engine::interrupt::requested().is_none() {
        tokio::time::sleep(INTERRUPT_POLL).await;
    }
}

/// How often the look checks for a signal.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);
