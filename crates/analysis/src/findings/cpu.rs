//! The CPU while the cell ran: `generator-saturated` (poolbench itself may
//! be the bottleneck) and `machine-busy` (others were, poolbench a
//! bystander).
use super::check::{Check, Evidence, Run};
use poolbench_model::CellResult;

pub(crate) const GENERATOR_SATURATED: Check = Check {
    id: "generator-saturated",
    title: "the CPU was saturated while poolbench ran: the load generator may be measuring itself",
    find: generator_saturated,
};

pub(crate) const MACHINE_BUSY: Check = Check {
    id: "machine-busy",
    title: "other processes kept the CPU saturated while poolbench ran: the figures are disturbed",
    find: machine_busy,
};

/// Share of the cores poolbench must use, on a saturated machine, to count
/// as a cause of the saturation rather than a bystander.
const GENERATOR_SHARE: f64 = 0.25;
/// Busy share of the machine that counts as saturated.
const SATURATED: f64 = 0.9;

/// poolbench's share of the cores and the machine's.
fn shares(c: &CellResult) -> (f64, f64) {
    (c.generator_cpu.unwrap_or(0.0), c.machine_cpu.unwrap_or(0.0))
}

fn busy(c: &CellResult) -> Evidence {
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

fn saturated((own, machine): (f64, f64)) -> bool {
    own >= SATURATED || (machine >= SATURATED && own >= GENERATOR_SHARE)
}

fn generator_saturated(run: &Run) -> Vec<Evidence> {
    let mut found = Vec::new();
    for c in run.cells() {
        if c.shards.is_empty() {
            if saturated(shares(c)) {
                found.push(busy(c));
            }
            continue;
        }
        // Merged shards: each ran on its own machine; name the one.
        for p in &c.shards {
            let (own, machine) = (p.generator_cpu.unwrap_or(0.0), p.machine_cpu.unwrap_or(0.0));
            if saturated((own, machine)) {
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

fn machine_busy(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| c.shards.is_empty())
        .filter(|c| {
            let (own, machine) = shares(c);
            own < GENERATOR_SHARE && machine >= SATURATED
        })
        .map(busy)
        .collect()
}
