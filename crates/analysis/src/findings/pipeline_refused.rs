//! `pipeline-refused`: on a pipelined strategy, the server answered about
//! one request per connection and closed it, so the requests written
//! behind that answer failed unanswered: it does not take pipelined
//! requests (or does not keep connections at all).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::PipelineRefused,
    title: "the server closed each pipelined connection after an answer: the requests written behind it went unanswered",
    find,
};

/// Most answers per connection of a server that closes after each: a
/// connection that pipelines carries many more.
pub(crate) const MOST_PER_CONNECTION: f64 = 2.0;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        if c.behind_us.is_none() && !c.strategy.starts_with("pipeline:") {
            continue;
        }
        let resets = c.errors.by_kind.get("reset").copied().unwrap_or(0);
        if resets == 0 || c.connections.opened == 0 {
            continue;
        }
        // Answers, not requests completed (a reset completes one too).
        let per = c.ok as f64 / c.connections.opened as f64;
        if per >= MOST_PER_CONNECTION {
            continue;
        }
        out.push(Evidence::cell(
            c,
            format!(
                "{resets} requests failed behind an answer that ended their connection; \
                 {} connections opened carried {per:.1} answers each: the server answers one \
                 request a connection and closes it",
                c.connections.opened
            ),
        ));
    }
    out
}
