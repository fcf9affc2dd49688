//! `head-of-line`: on a pipelined connection, requests waited behind the
//! answers written before theirs (HTTP/1.1 answers in order).
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::HeadOfLine,
    title: "requests waited behind earlier answers on their pipelined connection (head-of-line blocking)",
    find,
};

/// Least share of the mean request time spent behind an earlier answer.
pub(crate) const SHARE: f64 = 0.1;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let Some(behind) = &c.behind_us else {
            continue;
        };
        let request = c.request_us.mean;
        if request <= 0.0 || behind.mean < SHARE * request {
            continue;
        }
        out.push(Evidence::cell(
            c,
            format!(
                "{:.0}% of the request time was spent behind the answer before it on the same \
                 connection: {} of {} on average (p99 behind: {})",
                100.0 * behind.mean / request,
                ms(behind.mean),
                ms(request),
                ms(behind.p99)
            ),
        ));
    }
    out
}
