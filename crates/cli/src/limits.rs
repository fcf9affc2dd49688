//! What the machine can hold, checked before any load. File descriptors:
//! every connection is one (two when the built-in server runs in this
//! process); the soft limit is raised to the hard one at start, and a grid
//! that needs more is refused. Memory: every worker is a task of a few
//! kilobytes, so a concurrency the memory cannot hold is refused too.
use crate::Failure;
use poolbench_model::Plan;

/// Descriptors beyond the connections: listeners, the runtime's epoll and
/// wake-up descriptors, the stats request, standard streams, output files.
const HEADROOM: u64 = 64;

/// Raise the soft `RLIMIT_NOFILE` to the hard limit; the limit now in
/// effect (`None` where it cannot be read).
pub(crate) fn raise() -> Option<u64> {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
        if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
            return Some(hard);
        }
        Some(soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Refuse (exit 2) a plan whose busiest cell needs more descriptors than
/// `limit` allows.
pub(crate) fn check(plan: &Plan, embedded: bool, limit: Option<u64>) -> Result<(), Failure> {
    let (Some(limit), Some((connections, cell))) = (limit, plan.most_connections()) else {
        return Ok(());
    };
    let sides: u64 = if embedded { 2 } else { 1 };
    let need = (connections as u64)
        .saturating_mul(sides)
        .saturating_add(HEADROOM);
    if need <= limit {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{} needs {need} file descriptors ({connections} connections{}, plus {HEADROOM}) but this process may open {limit} (the hard limit, ulimit -Hn): lower -c or the pool size, or raise the limit",
        cell.label(),
        if embedded {
            ", twice: the built-in server runs in this process"
        } else {
            ""
        }
    )))
}

/// Memory a worker may take, its connection's buffers included: about
/// 15 KB measured at c=10,000 (bench/log/RESULTS.md), rounded up.
const WORKER_BYTES: u64 = 32 * 1024;

/// Refuse (exit 2) a concurrency whose workers would take more than half
/// of the memory available now.
pub(crate) fn check_memory(plan: &Plan) -> Result<(), Failure> {
    let (Some(available), Some(&c)) = (mem_available(), plan.concurrency.iter().max()) else {
        return Ok(());
    };
    let need = (c as u64).saturating_mul(WORKER_BYTES);
    if need <= available / 2 {
        return Ok(());
    }
    Err(Failure::input(format!(
        "c={c} needs about {} MB for its workers ({} KB each) but {} MB of memory is available (half may be used): lower -c",
        need / 1_000_000,
        WORKER_BYTES / 1024,
        available / 1_000_000
    )))
}

/// `MemAvailable` of /proc/meminfo, in bytes, where there is one.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
