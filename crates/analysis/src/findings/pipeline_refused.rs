//! `pipeline-refused`: on a pipelined strategy, the server answered about
//! one request per connection, so the requests written behind that answer
//! went unanswered: it closed the connection (it does not take pipelined
//! requests, or does not keep connections at all), or kept it open and
//! stopped reading and answering (they timed out).
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;

pub(crate) const CHECK: Check = Check {
    id: Id::PipelineRefused,
    title: "the server answered about one request per pipelined connection: the requests written behind it went unanswered",
    find,
};

/// Most answers per connection of a server that closes after each: a
/// connection that pipelines carries many more.
pub(crate) const MOST_PER_CONNECTION: f64 = 2.0;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in run.cells() {
        let pipelined =
            poolbench_model::Family::of(&c.strategy) == Some(poolbench_model::Family::Pipeline);
        if c.behind_us.is_none() && !pipelined {
            continue;
        }
        let kind = |k: &str| c.errors.by_kind.get(k).copied().unwrap_or(0);
        let (resets, timeouts) = (kind("reset"), kind("timeout"));
        if resets + timeouts == 0 || c.connections.opened == 0 {
            continue;
        }
        // Answers, not requests completed (a reset completes one too).
        let per = c.ok as f64 / c.connections.opened as f64;
        if per >= MOST_PER_CONNECTION {
            continue;
        }
        let opened = c.connections.opened;
        let text = if resets >= timeouts {
            format!(
                "{resets} requests failed behind an answer that ended their connection; \
                 {opened} connections opened carried {per:.1} answers each: the server answers one \
                 request a connection and closes it"
            )
        } else {
            format!(
                "{timeouts} requests timed out behind an answer on connections left open; \
                 {opened} connections opened carried {per:.1} answers each: the server stopped \
                 reading or answering the requests pipelined behind the first"
            )
        };
        out.push(Evidence::cell(c, text));
    }
    out
}
