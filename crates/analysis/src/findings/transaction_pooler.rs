//! `transaction-pooler`: prepared statements fail as they do only through
//! a proxy that hands each transaction to any server connection
//! (PgBouncer's transaction mode, and the like): SQLSTATE 26000 (the
//! statement does not exist on this server connection) or 42P05 (another
//! client prepared the same name on it), or such a text from the proxy
//! itself. Every figure of such a run mixes failures of the protocol with
//! the service's: no strategy is recommended.
use super::check::{Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::TransactionPooler,
    title: "prepared statements fail: a transaction-pooling proxy sits in between; \
            use --query-mode extended or simple",
    find,
};

/// The SQLSTATEs of a named statement missing or already there.
const CODES: [&str; 2] = ["26000", "42P05"];

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter_map(|c| {
            let failed = failures(c);
            (failed > 0).then(|| {
                let example = example(c).unwrap_or_default();
                Evidence::cell(c, format!("{failed} prepared-statement errors{example}"))
            })
        })
        .collect()
}

/// Does a server's message say a prepared statement is missing or taken?
fn is_prepared_statement_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("prepared statement")
        && (m.contains("does not exist") || m.contains("already exists"))
}

/// The cell's errors that are prepared statements missing or taken.
fn failures(c: &CellResult) -> u64 {
    c.errors
        .by_status
        .iter()
        .filter(|(code, _)| {
            CODES.contains(&code.as_str())
                || c.errors
                    .messages
                    .get(*code)
                    .is_some_and(|m| is_prepared_statement_error(m))
        })
        .map(|(_, n)| n)
        .sum()
}

/// `, e.g. "prepared statement "s0" does not exist (26000)"`.
fn example(c: &CellResult) -> Option<String> {
    c.errors
        .messages
        .iter()
        .find(|(code, m)| CODES.contains(&code.as_str()) || is_prepared_statement_error(m))
        .map(|(_, m)| format!(", e.g. \"{m}\""))
}

/// Whether the run's findings name a transaction-pooling proxy.
pub(crate) fn found(result: &poolbench_model::RunResult) -> bool {
    result
        .findings
        .iter()
        .any(|p| p.id == Id::TransactionPooler)
}
