//! The one reading of a run that `run`, `merge`, `report` and `scenario`
//! share: each cell's SLO breaches and ramp summary, the scalability fits,
//! the findings and the recommendation, all made again from the cells.
use crate::findings::find_all;
use crate::ramp_summary::summarize;
use crate::recommend::recommend;
use crate::usl::usl_fits;
use poolbench_model::{LoadModel, RunResult};

/// Annotate `result` with everything the analysis finds in its cells,
/// replacing what it held: a pure function of the cells and the plan, so
/// analyzing twice gives the same result.
pub fn analyze(result: &mut RunResult) {
    let plan = &result.config;
    if let Some(slo) = &plan.slo {
        for c in &mut result.cells {
            c.slo_breaches = Some(slo.breaches(c));
        }
    }
    if let Some(ramp) = &plan.ramp {
        let slo_p99 = plan.slo.as_ref().and_then(|s| s.p99_us);
        for c in &mut result.cells {
            // The timeline is the first run's; each run lasts the ramp.
            let first_run_s = c.duration_s / c.reps.max(1) as f64;
            c.ramp = Some(summarize(
                ramp,
                &c.timeline,
                &c.latency_intervals,
                first_run_s,
                slo_p99,
            ));
        }
    }
    // Concurrency levels are the load only in a closed loop: an open
    // loop's are caps on requests in flight, which no USL curve follows.
    result.scaling = match plan.load {
        LoadModel::Closed => usl_fits(result),
        _ => Vec::new(),
    };
    result.findings = find_all(result);
    (result.recommendation, result.reason) = match recommend(result) {
        Ok(r) => (Some(r), None),
        Err(why) => (None, Some(why)),
    };
}
