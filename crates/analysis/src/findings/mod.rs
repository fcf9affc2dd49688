//! The pitfalls that make a run's numbers lie. Pure functions of the
//! result.
//!
//! One pitfall is one file: its id, its title and a function of the run
//! that returns its evidence ([`Check`], check.rs), listed once in
//! [`CHECKS`]. The
//! text report, the JSON and the HTML read the same list; ids are stable.
use check::Run;
use poolbench_model::{LoadModel, Pitfall, RunResult};

mod batching;
pub(crate) mod ceiling;
pub(crate) mod check;
mod cpu;
mod delayed_ack;
mod errors;
mod few_samples;
mod hiccups;
mod knee;
mod nested_checkout;
mod not_achieved;
mod outage;
pub(crate) mod pool_beyond_client;
pub(crate) mod pool_bound;
mod pool_queueing;
mod reconnects;
mod stall;
mod starvation;
pub(crate) mod streams_capped;
mod tls_handshake;
pub(crate) mod transaction_pooler;
mod unequal_caps;

pub use check::Check;
pub use outage::{outages, Outage};

/// Every pitfall poolbench checks, by id.
pub const CHECKS: &[Check] = &[
    batching::CHECK,
    ceiling::CHECK,
    errors::CHECK,
    few_samples::CHECK,
    hiccups::CHECK,
    cpu::GENERATOR_SATURATED,
    cpu::MACHINE_BUSY,
    delayed_ack::CHECK,
    nested_checkout::CHECK,
    starvation::CHECK,
    not_achieved::CHECK,
    outage::CHECK,
    pool_beyond_client::CHECK,
    pool_bound::CHECK,
    pool_queueing::CHECK,
    reconnects::CHECK,
    tls_handshake::CHECK,
    stall::CHECK,
    streams_capped::CHECK,
    knee::CHECK,
    transaction_pooler::CHECK,
    unequal_caps::CHECK,
];

/// Every pitfall that applies to `result`, ordered by id.
pub fn pitfalls(result: &RunResult) -> Vec<Pitfall> {
    let run = Run {
        result,
        closed: matches!(result.config.load, LoadModel::Closed),
        fastest_request_us: result
            .cells
            .iter()
            .filter(|c| c.ok > 0 && c.request_us.mean > 0.0)
            .map(|c| c.request_us.mean)
            .min_by(f64::total_cmp),
    };
    let mut found: Vec<Pitfall> = CHECKS
        .iter()
        .filter_map(|check| {
            let evidence = (check.find)(&run);
            (!evidence.is_empty()).then(|| Pitfall {
                id: check.id.to_string(),
                title: check.title.to_string(),
                cells: evidence.iter().filter_map(|e| e.cell.clone()).collect(),
                evidence: evidence.into_iter().map(|e| e.line).collect(),
            })
        })
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
        assert!(ids
            .iter()
            .all(|id| id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')));
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id listed twice");
    }
}
