//! `closed-loop-ceiling`: a closed loop of c workers cannot exceed c ÷ the
//! service time; throughput there measures the load, not the strategy.
//! The service time is the server's own (its counters) where it has them,
//! else the run's fastest mean request time: any target.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::ClosedLoopCeiling,
    title: "throughput is at c ÷ server time: it measures the load's concurrency, not the strategy",
    find,
};

/// Share of the ceiling at which a cell counts as at it.
const NEAR: f64 = 0.9;

/// Whether a throughput is at a closed loop's ceiling (c ÷ service time).
pub fn at_ceiling(throughput_rps: f64, ceiling_rps: f64) -> bool {
    throughput_rps >= NEAR * ceiling_rps
}

fn find(run: &Run) -> Vec<Evidence> {
    if !run.closed {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in run.cells() {
        let service = match c.server.and_then(|s| s.mean_service_us()) {
            Some(us) => Some((us, "mean server time")),
            None => run
                .fastest_request_us
                .map(|us| (us, "fastest mean request time in this run")),
        };
        let Some((service, source)) = service.filter(|(us, _)| *us > 0.0) else {
            continue;
        };
        let ceiling = c.concurrency as f64 / (service / 1e6);
        if at_ceiling(c.throughput_rps, ceiling) {
            out.push(Evidence::cell(
                c,
                format!(
                    "{:.1} req/s against a ceiling of {:.1} (c={} ÷ {} {source})",
                    c.throughput_rps,
                    ceiling,
                    c.concurrency,
                    ms(service)
                ),
            ));
        }
    }
    out
}
