//! The findings that make a run's numbers lie. Pure functions of the
//! result.
//!
//! One finding is one file, named as its id: the id, its title, its
//! thresholds (functions others call rather than keep numbers of their
//! own) and a function of the run that returns its evidence ([`Check`],
//! check.rs), listed once in [`CHECKS`]. The text report, the JSON and the
//! HTML read the same list; ids are stable.
use check::Run;
use poolbench_model::{Finding, LoadModel, RunResult};

mod batching_server;
pub(crate) mod check;
pub(crate) mod client_churn;
pub(crate) mod client_hidden_cap;
pub(crate) mod client_idle_race;
pub(crate) mod client_single_connection;
pub mod closed_loop_ceiling;
mod delayed_ack;
mod errors;
mod few_samples;
pub mod fleet_overcommit;
pub mod generator_hiccups;
pub mod generator_saturated;
mod head_of_line;
pub(crate) mod idle_hoard;
pub(crate) mod idle_reuse_race;
mod machine_busy;
pub(crate) mod near_connection_limit;
mod nested_checkout;
mod nested_checkout_starvation;
mod not_achieved;
mod outage;
mod pipeline_refused;
pub(crate) mod pool_beyond_client;
pub mod pool_bound;
mod pool_queueing;
mod reconnects;
mod stall;
pub(crate) mod streams_capped;
mod target_saturated;
mod tls_handshake_bound;
pub(crate) mod transaction_pooler;
mod unequal_caps;

pub use check::Check;
pub use outage::{outages, Outage};

/// Every finding poolbench checks, one per [`Id`](poolbench_model::findings::Id), in the order of the
/// ids' names.
pub const CHECKS: &[Check] = &[
    batching_server::CHECK,
    client_churn::CHECK,
    client_hidden_cap::CHECK,
    client_idle_race::CHECK,
    client_single_connection::CHECK,
    closed_loop_ceiling::CHECK,
    delayed_ack::CHECK,
    errors::CHECK,
    few_samples::CHECK,
    fleet_overcommit::CHECK,
    generator_hiccups::CHECK,
    generator_saturated::CHECK,
    head_of_line::CHECK,
    idle_hoard::CHECK,
    idle_reuse_race::CHECK,
    machine_busy::CHECK,
    near_connection_limit::CHECK,
    nested_checkout::CHECK,
    nested_checkout_starvation::CHECK,
    not_achieved::CHECK,
    outage::CHECK,
    pipeline_refused::CHECK,
    pool_beyond_client::CHECK,
    pool_bound::CHECK,
    pool_queueing::CHECK,
    reconnects::CHECK,
    stall::CHECK,
    streams_capped::CHECK,
    target_saturated::CHECK,
    tls_handshake_bound::CHECK,
    transaction_pooler::CHECK,
    unequal_caps::CHECK,
];

/// Every finding that applies to `result`, ordered by id.
pub fn find_all(result: &RunResult) -> Vec<Finding> {
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
    let mut found: Vec<Finding> = CHECKS
        .iter()
        .filter_map(|check| {
            let evidence = (check.find)(&run);
            (!evidence.is_empty()).then(|| Finding {
                id: check.id.clone(),
                title: check.title.to_string(),
                cells: evidence.iter().filter_map(|e| e.cell.clone()).collect(),
                evidence: evidence.into_iter().map(|e| e.line).collect(),
            })
        })
        .collect();
    found.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    found
}

#[cfg(test)]
mod tests {
    use super::{generator_hiccups, generator_saturated, pool_bound, CHECKS};
    use poolbench_model::findings::Id;

    #[test]
    fn one_check_per_id() {
        let ids: Vec<&Id> = CHECKS.iter().map(|c| &c.id).collect();
        assert_eq!(ids, Id::ALL.iter().collect::<Vec<_>>());
    }

    #[test]
    fn hiccups_that_limit_the_generator_also_disturb_its_tail() {
        for (hiccup, p99) in [(20_000.0, 40_000.0), (20_000.0, 0.0), (50_000.0, 90_000.0)] {
            assert!(generator_hiccups::limits(hiccup, p99));
            assert!(generator_hiccups::disturbs(hiccup, p99));
        }
        assert!(!generator_hiccups::limits(19_999.0, 1_000.0));
        assert!(!generator_hiccups::limits(20_000.0, 40_001.0));
        assert!(generator_hiccups::disturbs(19_999.0, 1_000.0));
    }

    #[test]
    fn without_the_machine_s_share_only_poolbench_s_own_counts() {
        assert!(generator_saturated::saturated(0.9, None));
        assert!(!generator_saturated::saturated(0.89, None));
        assert!(!generator_saturated::saturated(0.3, Some(0.89)));
        assert!(generator_saturated::saturated(0.3, Some(0.95)));
    }

    #[test]
    fn the_pool_bounds_throughput_near_its_limit_with_workers_waiting() {
        assert!(pool_bound::shows(1000.0, 1100.0, 0.3));
        assert!(pool_bound::shows(1140.0, 1000.0, 0.5));
        assert!(!pool_bound::shows(1000.0, 1200.0, 0.5));
        assert!(!pool_bound::shows(1000.0, 1000.0, 0.29));
    }
}
