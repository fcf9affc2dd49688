//! A step's `expect` lines checked against its result: each gives a
//! verdict line, failed or met.
use super::file::Expect;
use poolbench_model::findings::Id;
use poolbench_model::RunResult;

/// One checked expectation.
pub(crate) struct Verdict {
    pub(crate) met: bool,
    pub(crate) line: String,
}

fn verdict(met: bool, line: String) -> Verdict {
    Verdict { met, line }
}

pub(crate) fn check(e: &Expect, r: &RunResult) -> Vec<Verdict> {
    let mut out = Vec::new();
    let named = |id: &Id| r.findings.iter().any(|p| &p.id == id);
    for id in &e.finding {
        out.push(verdict(named(id), format!("finding {id} named")));
    }
    for id in &e.no_finding {
        out.push(verdict(!named(id), format!("no finding {id}")));
    }
    if let Some(want) = &e.best {
        let top = r.cells.iter().map(|c| c.concurrency).max().unwrap_or(0);
        let mut at: Vec<_> = r.cells.iter().filter(|c| c.concurrency == top).collect();
        at.sort_by(|a, b| b.throughput_rps.total_cmp(&a.throughput_rps));
        let got = at.first().map(|c| c.strategy.clone()).unwrap_or_default();
        let tied = at
            .iter()
            .any(|c| &c.strategy == want && poolbench_report::ties_with_best(c, at[0]));
        out.push(verdict(
            tied,
            format!("best at c={top}: {want} (measured: {got})"),
        ));
    }
    if let Some(want) = &e.recommend {
        let got = r
            .recommendation
            .as_ref()
            .map_or("none".to_string(), |x| x.strategy.clone());
        out.push(verdict(
            &got == want,
            format!("recommended: {want} (measured: {got})"),
        ));
    }
    if let Some(want) = e.stall {
        let got = r.cells.iter().any(|c| !c.stalls.is_empty()) || named(&Id::Stall);
        out.push(verdict(
            got == want,
            format!("stall: {want} (measured: {got})"),
        ));
    }
    if let Some(want) = e.errors {
        let failed: u64 = r.cells.iter().map(|c| c.errors.total).sum();
        out.push(verdict(
            (failed > 0) == want,
            format!("errors: {want} (measured: {failed} failed)"),
        ));
    }
    if let Some(share) = e.same_throughput {
        let rates: Vec<f64> = r.cells.iter().map(|c| c.throughput_rps).collect();
        let hi = rates.iter().copied().fold(0.0, f64::max);
        let lo = rates.iter().copied().fold(f64::MAX, f64::min);
        out.push(verdict(
            hi > 0.0 && (hi - lo) / hi <= share,
            format!(
                "every strategy within {:.0}% of one throughput (measured {lo:.0} to {hi:.0} req/s)",
                share * 100.0
            ),
        ));
    }
    out
}
