//! Reading a finished run: the pitfalls that make its numbers lie, and the
//! pool size worth using. Pure functions of the result.
use crate::load::LoadModel;
use crate::result::{CellResult, RunResult};
use poolbench_pool::StrategySpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod hiccups;
mod scaling;

pub use scaling::{usl_fits, UslFit};

/// One reason not to trust (part of) a run, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pitfall {
    /// Stable name: `pool-queueing`, `closed-loop-ceiling`, `few-samples`,
    /// `unequal-caps`, `reconnects`, `nested-checkout`,
    /// `nested-checkout-starvation`, `errors`,
    /// `not-achieved`, `generator-saturated`, `generator-hiccups`, `machine-busy`,
    /// `batching-server`, `stall`.
    pub id: String,
    /// What it means, in one line.
    pub title: String,
    /// The cells it concerns (`strategy c=N`).
    pub cells: Vec<String>,
    /// The numbers that show it, one line per cell or finding.
    pub evidence: Vec<String>,
}

/// The strategy and pool size to use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub strategy: String,
    pub pool_size: Option<usize>,
    pub concurrency: usize,
    pub reason: String,
}

const CEILING: &str = "closed-loop-ceiling";

/// Share of the cores poolbench must use, on a saturated machine, to count
/// as a cause of the saturation rather than a bystander.
const GENERATOR_SHARE: f64 = 0.25;

fn label(c: &CellResult) -> String {
    format!("{} c={}", c.strategy, c.concurrency)
}

fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}

/// Collects findings per pitfall id, in a stable order.
#[derive(Default)]
struct Findings(BTreeMap<&'static str, Pitfall>);

impl Findings {
    fn add(&mut self, id: &'static str, title: &str, cell: Option<&CellResult>, evidence: String) {
        let p = self.0.entry(id).or_insert_with(|| Pitfall {
            id: id.to_string(),
            title: title.to_string(),
            cells: Vec::new(),
            evidence: Vec::new(),
        });
        if let Some(c) = cell {
            p.cells.push(label(c));
        }
        p.evidence.push(evidence);
    }
}

/// Every pitfall that applies to `result`.
pub fn pitfalls(result: &RunResult) -> Vec<Pitfall> {
    let mut f = Findings::default();
    let closed = matches!(result.config.load, LoadModel::Closed);
    let service = fastest_request(result);
    for c in &result.cells {
        per_cell(&mut f, c, closed, service);
    }
    unequal_caps(&mut f, &result.cells);
    if closed {
        scaling::knees(&mut f, result);
    }
    if let Some(p) = &result.pipeline {
        if p.suspect_batching() {
            f.add(
                "batching-server",
                "the server answers pipelined requests in one write: pipelined throughput says nothing about a real API",
                None,
                format!(
                    "{} pipelined requests per round: {:.1} responses per read on average, {} of {} reads carried several",
                    p.depth, p.mean_per_read, p.batched_reads, p.reads
                ),
            );
        }
    }
    f.0.into_values().collect()
}

/// The shortest mean request time (connection in hand to whole answer) of
/// any cell that succeeded: the target's service time plus the round trip,
/// as near as this run can tell without the server's own counters.
fn fastest_request(result: &RunResult) -> Option<f64> {
    result
        .cells
        .iter()
        .filter(|c| c.ok > 0 && c.request_us.mean > 0.0)
        .map(|c| c.request_us.mean)
        .min_by(f64::total_cmp)
}

fn per_cell(f: &mut Findings, c: &CellResult, closed: bool, fastest: Option<f64>) {
    let load = if closed {
        c.concurrency as f64
    } else {
        c.achieved_concurrency
    };
    if let Some(cap) = c.connection_cap {
        let share = if c.latency_us.mean > 0.0 {
            c.checkout_wait_us.mean / c.latency_us.mean
        } else {
            0.0
        };
        if load > cap as f64 && share >= 0.05 {
            f.add(
                "pool-queueing",
                "concurrency above pool capacity: part of the latency is waiting for a connection",
                Some(c),
                format!(
                    "{}: {load:.0} concurrent on {cap} connection{}, {:.0}% of latency waiting for one ({} of {})",
                    label(c),
                    if cap == 1 { "" } else { "s" },
                    share * 100.0,
                    ms(c.checkout_wait_us.mean),
                    ms(c.latency_us.mean)
                ),
            );
        }
    }
    if closed {
        // The server's own counters where it has them (the built-in
        // server, a remote `poolbench serve`), else the run's fastest
        // requests: any target.
        let service = match c.server.and_then(|s| s.mean_service_us()) {
            Some(us) => Some((us, "mean server time")),
            None => fastest.map(|us| (us, "fastest mean request time in this run")),
        };
        if let Some((service, source)) = service.filter(|(us, _)| *us > 0.0) {
            let ceiling = c.concurrency as f64 / (service / 1e6);
            if c.throughput_rps >= 0.9 * ceiling {
                f.add(
                    CEILING,
                    "throughput is at c ÷ server time: it measures the load's concurrency, not the strategy",
                    Some(c),
                    format!(
                        "{}: {:.1} req/s against a ceiling of {:.1} (c={} ÷ {} {source})",
                        label(c),
                        c.throughput_rps,
                        ceiling,
                        c.concurrency,
                        ms(service)
                    ),
                );
            }
        }
    }
    if c.samples.len() < 3 || c.throughput_ci95 == Some(0.0) {
        f.add(
            "few-samples",
            "fewer than 3 samples (or zero deviation): no confidence interval; use --reps 3 or --batch",
            Some(c),
            format!("{}: {} sample(s)", label(c), c.samples.len()),
        );
    }
    let reuses = !matches!(
        c.strategy.parse::<StrategySpec>(),
        Ok(StrategySpec::PerRequest | StrategySpec::TakeOrCreate(_)) | Err(_)
    );
    if reuses && c.reopened > 0 {
        reconnects(f, c);
    }
    let nested = c
        .errors
        .by_kind
        .get("nested_checkout")
        .copied()
        .unwrap_or(0);
    if c.pool.nested_waits > 0 || nested > 0 {
        f.add(
            "nested-checkout",
            "a task holding a connection waited for another from the same pool: deadlocks once every holder does",
            Some(c),
            format!(
                "{}: {} nested waits, {} refused (--fail-on-nested); deadlock-free needs a pool of at least c×(2−1)+1 = {}",
                label(c),
                c.pool.nested_waits,
                nested,
                c.concurrency + 1
            ),
        );
    }
    if let Some(db) = c.server.and_then(|s| s.db_pool) {
        let tasks = match db.peak_requests {
            0 => c.concurrency as u64,
            n => n.min(c.concurrency as u64),
        };
        let cap = db.size + db.overflow;
        let needed = db.deadlock_free_minimum(tasks);
        // Waits while connections open are harmless when the pool is big
        // enough; timeouts, or nested waits in a pool too small, are not.
        let starved = db.timeouts > 0 || (db.nested_waits > 0 && cap < needed);
        if db.per_request > 1 && starved {
            f.add(
                "nested-checkout-starvation",
                "nested-checkout starvation in the service: handlers holding one database connection wait for a second from the same pool, so the pool deadlocks until the checkout timeout",
                Some(c),
                format!(
                    "{}: database pool {}+{} = {cap} connections, {tasks} concurrent requests each holding {}: {} nested waits, {} checkout timeouts, peak {} in use; deadlock-free needs T×(C−1)+1 = {tasks}×({}−1)+1 = {needed}{}",
                    label(c),
                    db.size,
                    db.overflow,
                    db.per_request,
                    db.nested_waits,
                    db.timeouts,
                    db.peak_in_use,
                    db.per_request,
                    if cap < needed {
                        format!(" (the pool is {} short)", needed - cap)
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }
    if c.errors.total > 0 {
        let kinds: Vec<String> = c
            .errors
            .by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        f.add(
            "errors",
            "requests failed",
            Some(c),
            format!(
                "{}: {:.2}% errors ({})",
                label(c),
                c.error_rate() * 100.0,
                kinds.join(", ")
            ),
        );
    }
    not_achieved(f, c, closed);
    let own = c.generator_cpu.unwrap_or(0.0);
    let machine = c.machine_cpu.unwrap_or(0.0);
    // Saturated by others, poolbench a bystander: the figures are disturbed,
    // but not by the generator.
    let busy = format!(
        "{}: poolbench used {:.0}% of the cores, the machine was {:.0}% busy",
        label(c),
        own * 100.0,
        machine * 100.0
    );
    if own < GENERATOR_SHARE && machine >= 0.9 {
        f.add(
            "machine-busy",
            "other processes kept the CPU saturated while poolbench ran: the figures are disturbed",
            Some(c),
            busy.clone(),
        );
    }
    if own >= 0.9 || (machine >= 0.9 && own >= GENERATOR_SHARE) {
        f.add(
            "generator-saturated",
            "the CPU was saturated while poolbench ran: the load generator may be measuring itself",
            Some(c),
            busy,
        );
    }
    hiccups::check(f, c);
    for s in &c.stalls {
        f.add(
            "stall",
            "no request succeeded for a while though requests were in flight: the target froze",
            Some(c),
            format!(
                "{}: nothing succeeded for {:.1} s from {:.1} s into the measurement; {} timeouts",
                label(c),
                s.duration_s,
                s.start_s,
                c.errors.by_kind.get("timeout").copied().unwrap_or(0)
            ),
        );
    }
}

/// Who closed the connections that were reopened: a request that timed
/// out leaves its connection in an unknown state, so the client closes it
/// (`closed_abandoned`, counted among the broken); the rest of the broken
/// ones the server closed
/// (end of stream, reset); idle timeout and lifetime are the pool's.
fn reconnects(f: &mut Findings, c: &CellResult) {
    let by_client = c.pool.closed_abandoned.min(c.pool.closed_broken);
    let by_server = c.pool.closed_broken - by_client;
    let mut who = Vec::new();
    if by_client > 0 {
        who.push(format!(
            "{by_client} by the client after its own request timeouts"
        ));
    }
    if by_server > 0 {
        who.push(format!(
            "{by_server} by the server (end of stream or reset)"
        ));
    }
    if c.pool.closed_idle > 0 {
        who.push(format!("{} by the pool's idle timeout", c.pool.closed_idle));
    }
    if c.pool.closed_lifetime > 0 {
        who.push(format!(
            "{} by the pool's max lifetime",
            c.pool.closed_lifetime
        ));
    }
    if who.is_empty() {
        who.push("none closed by the client, the server or the pool's limits".into());
    }
    f.add(
        "reconnects",
        "connections were reopened while measuring (each line says who closed them)",
        Some(c),
        format!(
            "{}: {} connections reopened while measuring; closed: {}",
            label(c),
            c.reopened,
            who.join(", ")
        ),
    );
}

fn not_achieved(f: &mut Findings, c: &CellResult, closed: bool) {
    const TITLE: &str = "the load did not reach what was asked";
    let mut add = |why: String| {
        f.add(
            "not-achieved",
            TITLE,
            Some(c),
            format!("{}: {why}", label(c)),
        )
    };
    let fills_cap = matches!(
        c.strategy.parse::<StrategySpec>(),
        Ok(StrategySpec::Pool(_)
            | StrategySpec::RoundRobin(_)
            | StrategySpec::LeastLoaded(_)
            | StrategySpec::Shared
            | StrategySpec::Partitioned(..))
    );
    if let Some(cap) = c
        .connection_cap
        .filter(|&cap| fills_cap && closed && c.concurrency >= cap)
    {
        if c.connections.peak_open < cap as u64 {
            add(format!(
                "{cap} connections asked for, at most {} open",
                c.connections.peak_open
            ));
        }
    }
    if let Some(s) = c.server {
        if s.connections_peak < c.connections.peak_open {
            add(format!(
                "client had {} connections open, the server saw at most {}",
                c.connections.peak_open, s.connections_peak
            ));
        }
    }
    if let Some(rate) = c.requested_rate {
        if c.achieved_rate < 0.95 * rate {
            add(format!(
                "{rate:.0} req/s asked for, {:.1} achieved ({} late, {} dropped)",
                c.achieved_rate, c.late, c.dropped
            ));
        }
    }
    if closed && c.ok > 0 && c.achieved_concurrency < 0.9 * c.concurrency as f64 {
        add(format!(
            "Little's law gives {:.1} concurrent (throughput × mean latency) against c={}",
            c.achieved_concurrency, c.concurrency
        ));
    }
}

/// Different kinds of strategy compared at one concurrency with different
/// effective connection caps compare caps, not strategies.
fn unequal_caps(f: &mut Findings, cells: &[CellResult]) {
    let mut by_level: BTreeMap<usize, Vec<&CellResult>> = BTreeMap::new();
    for c in cells {
        by_level.entry(c.concurrency).or_default().push(c);
    }
    for (level, cs) in by_level {
        let kind = |c: &CellResult| c.strategy.split(':').next().unwrap_or("").to_string();
        let cap = |c: &CellResult| c.connection_cap.unwrap_or(level).min(level);
        let mut kinds: Vec<String> = cs.iter().map(|c| kind(c)).collect();
        kinds.sort();
        kinds.dedup();
        let mut caps: Vec<usize> = cs.iter().map(|c| cap(c)).collect();
        caps.sort_unstable();
        caps.dedup();
        if kinds.len() > 1 && caps.len() > 1 {
            let list: Vec<String> = cs
                .iter()
                .map(|c| format!("{} {}", c.strategy, cap(c)))
                .collect();
            f.add(
                "unequal-caps",
                "strategies compared with different connection caps: the ranking compares caps, not strategies",
                None,
                format!("c={level}: connections usable {}", list.join(", ")),
            );
        }
    }
}

/// Most errors a cell may have and still be recommended.
const RECOMMEND_MAX_ERRORS: f64 = 0.01;

/// The smallest connection cap whose throughput is within 5% of the peak
/// and whose p99 is within 20% of the best, at the highest concurrency,
/// among cells that failed at most 1% of requests and never stalled. None
/// when every such cell is at the closed-loop ceiling (`pitfalls` must be
/// in `result`): no strategy was the limit, so the run cannot rank them.
/// Otherwise, why not.
pub fn recommend(result: &RunResult) -> Result<Recommendation, String> {
    let level = result
        .cells
        .iter()
        .map(|c| c.concurrency)
        .max()
        .ok_or("no cells were run")?;
    let at_level: Vec<&CellResult> = result
        .cells
        .iter()
        .filter(|c| c.concurrency == level)
        .collect();
    let mut refused = Vec::new();
    let cells: Vec<&CellResult> = at_level
        .iter()
        .copied()
        .filter(|c| {
            let why = if c.ok == 0 {
                Some("nothing succeeded".to_string())
            } else if c.error_rate() > RECOMMEND_MAX_ERRORS {
                Some(format!("{:.0}% errors", c.error_rate() * 100.0))
            } else if !c.stalls.is_empty() {
                Some("stalled".to_string())
            } else {
                None
            };
            if let Some(why) = &why {
                refused.push(format!("{} {why}", c.strategy));
            }
            why.is_none()
        })
        .collect();
    if cells.is_empty() {
        return Err(format!(
            "every cell at c={level} failed more than 1% of its requests or stalled ({})",
            refused.join(", ")
        ));
    }
    let peak = cells.iter().map(|c| c.throughput_rps).fold(0.0, f64::max);
    let best_p99 = cells
        .iter()
        .map(|c| c.latency_us.p99)
        .fold(f64::INFINITY, f64::min);
    let cap = |c: &CellResult| c.connection_cap.unwrap_or(level);
    let near: Vec<&CellResult> = cells
        .iter()
        .copied()
        .filter(|c| c.throughput_rps >= 0.95 * peak && c.latency_us.p99 <= 1.2 * best_p99)
        .collect();
    let at_ceiling = |c: &CellResult| {
        let l = label(c);
        result
            .pitfalls
            .iter()
            .any(|p| p.id == CEILING && p.cells.contains(&l))
    };
    if cells.iter().all(|c| at_ceiling(c)) {
        return Err(format!(
            "at c={level} every cell is at the closed-loop ceiling (c ÷ service time): \
             no strategy limited throughput, so the run cannot tell them apart; \
             raise -c until throughput stops growing, or use --rate"
        ));
    }
    let pick = near
        .iter()
        .min_by(|a, b| {
            cap(a)
                .cmp(&cap(b))
                .then(b.throughput_rps.total_cmp(&a.throughput_rps))
        })
        .ok_or_else(|| {
            format!(
                "no cell at c={level} is within 5% of the peak throughput and 20% of the best p99"
            )
        })?;
    // A strategy without a cap (per-request, take-or-create) may open one
    // connection per worker, whatever its size says.
    let connections = match pick.connection_cap {
        Some(cap) => cap.to_string(),
        None => format!(
            "no cap: up to {level}, one per worker; {} open at peak",
            pick.connections.peak_open
        ),
    };
    // Where the law puts this strategy's peak, when the grid let it tell.
    let usl = result
        .scaling
        .iter()
        .find(|u| u.strategy == pick.strategy && u.r2 >= 0.8)
        .and_then(|u| u.peak_concurrency.map(|n| (n, u.peak_throughput)))
        .map(|(n, x)| {
            format!(
                "; the USL fit peaks at about {n:.0} concurrent ({x:.0} req/s) and falls beyond"
            )
        })
        .unwrap_or_default();
    let skipped = if refused.is_empty() {
        String::new()
    } else {
        format!("; not considered: {}", refused.join(", "))
    };
    Ok(Recommendation {
        strategy: pick.strategy.clone(),
        pool_size: pick.pool_size,
        concurrency: level,
        reason: format!(
            "at c={level}, the fewest connections ({connections}) within 5% of the peak throughput ({:.0} of {:.0} req/s) \
             and 20% of the best p99 ({} against {}){usl}{skipped}",
            pick.throughput_rps,
            peak,
            ms(pick.latency_us.p99),
            ms(best_p99)
        ),
    })
}
