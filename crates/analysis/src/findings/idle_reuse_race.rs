//! `idle-reuse-race`: connections the server closed while they sat idle
//! in the client's pool, met by the next request on them (sent again on a
//! new connection, or failed) or found closed at checkout and replaced
//! inside the measurement. The client kept idle connections longer than
//! the server does; its idle timeout belongs below the server's.
use super::check::{Check, Evidence, Run};
use crate::client_idle;
use poolbench_model::findings::Id;
use poolbench_model::{CellResult, IdleClosed};

pub(crate) const CHECK: Check = Check {
    id: Id::IdleReuseRace,
    title: "the server closed connections while they sat idle in the pool, and requests met them",
    find,
};

/// The least idle time that counts as the server's idle close, in µs: a
/// connection found closed after less was closed for another reason (its
/// last answer said so, a restart), not for idling.
pub fn min_idle_us() -> u64 {
    250_000
}

fn find(run: &Run) -> Vec<Evidence> {
    let scheme = run.result.config.target.scheme.as_str();
    run.cells()
        .filter_map(|c| {
            let (pool, stale) = (
                closed_idle(&c.pool.idle_closed),
                closed_idle(&c.idle_reuse.stale),
            );
            (pool.is_some() || stale.is_some()).then(|| Evidence::cell(c, line(c, scheme)))
        })
        .collect()
}

/// `c` if some connection in it was idle long enough to count.
fn closed_idle(c: &IdleClosed) -> Option<&IdleClosed> {
    (c.count > 0 && c.max_idle_us >= min_idle_us()).then_some(c)
}

fn line(c: &CellResult, scheme: &str) -> String {
    let mut parts = Vec::new();
    let mut closed = IdleClosed::default();
    let found = &c.pool.idle_closed;
    if found.count > 0 {
        closed.merge(found);
        parts.push(format!(
            "{} idle connections found closed by the server at checkout (idle {}) and reopened",
            found.count,
            span(found)
        ));
    }
    let stale = &c.idle_reuse.stale;
    if stale.count > 0 {
        closed.merge(stale);
        let resent = stale.count - c.idle_reuse.failed.min(stale.count);
        parts.push(format!(
            "{} requests sent on a connection the server had closed while idle (idle {}): {resent} sent again, {} failed",
            stale.count,
            span(stale),
            c.idle_reuse.failed
        ));
    }
    let alive = c.idle_reuse.alive_idle_max_us;
    let close = match alive > 0 && alive < closed.min_idle_us {
        true => format!(
            "the server closes idle connections after {} (connections idle {} still worked)",
            range(alive, closed.min_idle_us),
            secs(alive)
        ),
        false => format!(
            "the server closes idle connections after at most {}",
            secs(closed.min_idle_us)
        ),
    };
    format!(
        "{}; {close}: keep the client's idle timeout below that ({})",
        parts.join("; "),
        client_idle::names(scheme)
    )
}

fn span(c: &IdleClosed) -> String {
    match secs(c.min_idle_us) == secs(c.max_idle_us) {
        true => secs(c.min_idle_us),
        false => range(c.min_idle_us, c.max_idle_us),
    }
}

/// Two µs figures as seconds (`2.9–3.5 s`).
fn range(a: u64, b: u64) -> String {
    format!("{:.1}–{:.1} s", a as f64 / 1e6, b as f64 / 1e6)
}

/// µs as seconds, one decimal (`3.0 s`).
fn secs(us: u64) -> String {
    format!("{:.1} s", us as f64 / 1e6)
}
