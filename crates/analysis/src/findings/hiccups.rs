//! `generator-hiccups`: the generator itself stalled, next to the latencies
//! it reports. The hiccup meter (a thread sleeping 1 ms in a loop) woke
//! late; the load threads were stopped the same way, so part of the tail may
//! be the generator's, not the target's.
use super::check::{ms, Check, Evidence, Run};

pub(crate) const CHECK: Check = Check {
    id: "generator-hiccups",
    title: "the load generator itself stalled, for times not small next to the latencies it reports: part of the tail may be the generator's",
    find,
};

/// Hiccups below this are the ordinary wake-up latency of a busy machine,
/// which every load generator has; only longer ones are findings.
const FLOOR_US: f64 = 1000.0;
/// Share of the reported p99 that a hiccup p99.9 must exceed.
const SHARE_OF_P99: f64 = 0.1;

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| {
            let h = &c.generator_hiccups_us;
            h.count > 0
                && c.latency_us.count > 0
                && h.p999 > FLOOR_US.max(SHARE_OF_P99 * c.latency_us.p99)
        })
        .map(|c| {
            let h = &c.generator_hiccups_us;
            Evidence::cell(
                c,
                format!(
                    "hiccup p99.9 {} and max {} (a 1 ms sleep woke that late) against a measured p99 of {}",
                    ms(h.p999),
                    ms(h.max),
                    ms(c.latency_us.p99)
                ),
            )
        })
        .collect()
}
