//! `generator-hiccups`: the generator itself stalled, next to the latencies
//! it reports. The hiccup meter (a thread sleeping 1 ms in a loop) woke
//! late; the load threads were stopped the same way, so part of the tail may
//! be the generator's, not the target's.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::GeneratorHiccups,
    title: "the load generator itself stalled, for times not small next to the latencies it reports: part of the tail may be the generator's",
    find,
};

/// Hiccups below this are the ordinary wake-up latency of a busy machine,
/// which every load generator has; only longer ones are findings.
const FLOOR_US: f64 = 1000.0;
/// Share of the reported p99 that a hiccup p99.9 must exceed.
const SHARE_OF_P99: f64 = 0.1;
/// Hiccups (at their p99) from which the generator is the limit of the
/// load it can offer, not only a disturbance of its tail...
const LIMIT_US: f64 = 20_000.0;
/// ...when they are also this share of the reported p99 or more.
const LIMIT_SHARE_OF_P99: f64 = 0.5;

/// Do hiccups of `hiccup_p999_us` (p99.9) disturb a measured p99 of
/// `p99_us`?
pub(crate) fn disturbs(hiccup_p999_us: f64, p99_us: f64) -> bool {
    hiccup_p999_us > FLOOR_US.max(SHARE_OF_P99 * p99_us)
}

/// Are hiccups of `hiccup_p99_us` (p99) the generator's limit next to a
/// measured p99 of `p99_us`? A stronger level than `disturbs`, which it
/// implies: a search stops raising the load there.
pub fn limits(hiccup_p99_us: f64, p99_us: f64) -> bool {
    hiccup_p99_us >= LIMIT_US && hiccup_p99_us >= LIMIT_SHARE_OF_P99 * p99_us
}

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| {
            let h = &c.generator_hiccups_us;
            h.count > 0 && c.latency_us.count > 0 && disturbs(h.p999, c.latency_us.p99)
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
