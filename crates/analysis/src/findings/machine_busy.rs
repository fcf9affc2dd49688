//! `machine-busy`: other processes kept the CPU saturated while the cell
//! ran, poolbench a bystander (when poolbench is a cause, it is
//! `generator-saturated`).
use super::check::{Check, Evidence, Run};
use super::generator_saturated::{busy, generator_busy, machine_saturated, shares};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::MachineBusy,
    title: "other processes kept the CPU saturated while poolbench ran: the figures are disturbed",
    find,
};

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter(|c| c.shards.is_empty())
        .filter(|c| {
            let (own, machine) = shares(c);
            !generator_busy(own) && machine_saturated(machine)
        })
        .map(busy)
        .collect()
}
