//! `generator-saturated`: the CPU was saturated while the cell ran and
//! poolbench was a cause, so the load generator may be measuring itself.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::GeneratorSaturated,
    title: "the CPU was saturated while poolbench ran: the load generator may be measuring itself",
    find,
};

/// Share of the cores poolbench must use, on a saturated machine, to count
/// as a cause of the saturation rather than a bystander.
const GENERATOR_SHARE: f64 = 0.25;
/// Busy share of the machine (or of the cores poolbench used) that counts
/// as saturated.
const SATURATED: f64 = 0.9;

/// Was the machine saturated? `machine`: its busy share of the cores.
pub(crate) fn machine_saturated(machine: f64) -> bool {
    machine >= SATURATED
}

/// Was poolbench a cause of the saturation, not a bystander? `own`: its
/// share of the cores.
pub(crate) fn generator_busy(own: f64) -> bool {
    own >= GENERATOR_SHARE
}

/// Did the generator saturate the CPU? `own`: poolbench's share of the
/// cores; `machine`: the whole machine's, when known. All the cores busy
/// with poolbench, or a saturated machine with poolbench a cause.
pub fn saturated(own: f64, machine: Option<f64>) -> bool {
    own >= SATURATED || machine.is_some_and(|m| machine_saturated(m) && generator_busy(own))
}

/// poolbench's share of the cores and the machine's.
pub(crate) fn shares(c: &CellResult) -> (f64, f64) {
    (c.generator_cpu.unwrap_or(0.0), c.machine_cpu.unwrap_or(0.0))
}

/// The evidence line: both shares of cell `c`.
pub(crate) fn busy(c: &CellResult) -> Evidence {
    let (own, machine) = shares(c);
    Evidence::cell(
        c,
        format!(
            "poolbench used {:.0}% of the cores, the machine was {:.0}% busy",
            own * 100.0,
            machine * 100.0
        ),
    )
}

fn find(run: &Run) -> Vec<Evidence> {
    let mut found = Vec::new();
    for c in run.cells() {
        if c.shards.is_empty() {
            if saturated(c.generator_cpu.unwrap_or(0.0), c.machine_cpu) {
                found.push(busy(c));
            }
            continue;
        }
        // Merged shards: each ran on its own machine; name the one.
        for p in &c.shards {
            let (own, machine) = (p.generator_cpu.unwrap_or(0.0), p.machine_cpu.unwrap_or(0.0));
            if saturated(own, p.machine_cpu) {
                found.push(Evidence::cell(
                    c,
                    format!(
                        "shard {} ({}): poolbench used {:.0}% of its cores, its machine was {:.0}% busy",
                        p.shard,
                        p.cell,
                        own * 100.0,
                        machine * 100.0
                    ),
                ));
            }
        }
    }
    found
}
