//! Shards' results made ready to merge: all of one plan, each shard once,
//! none missing; their cells relabeled as the plan's own (the sizes and
//! workers of all shards together), each keeping its shard's figures.
use poolbench_model::{CellResult, RunResult, ShardPart, ShardStamp};

/// The shards in index order, relabeled, or what is wrong with them.
pub(crate) fn prepare(parts: &[RunResult]) -> Result<Vec<RunResult>, String> {
    let stamps = stamps(parts)?;
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| stamps[i].index);
    let mut whole = parts[order[0]].config.clone();
    whole.shard = None;
    let cells = whole.cells();
    let mut out: Vec<RunResult> = order.iter().map(|&i| parts[i].clone()).collect();
    for (r, stamp) in out.iter_mut().zip(order.iter().map(|&i| &stamps[i])) {
        if r.cells.len() > cells.len() {
            return Err(format!(
                "shard {}/{} has {} cells, its plan {}",
                stamp.index,
                stamp.count,
                r.cells.len(),
                cells.len()
            ));
        }
        for (c, spec) in r.cells.iter_mut().zip(&cells) {
            c.shards = vec![part(stamp.index, c)];
            c.strategy = spec.strategy.to_string();
            c.concurrency = spec.concurrency;
            c.pool_size = spec.strategy.size();
        }
        r.config = whole.clone();
    }
    // The connection caps of all shards together.
    for i in 0..out[0].cells.len() {
        let cap = out
            .iter()
            .map(|r| r.cells.get(i).and_then(|c| c.connection_cap))
            .sum::<Option<usize>>();
        out[0].cells[i].connection_cap = cap;
    }
    Ok(out)
}

fn part(index: usize, c: &CellResult) -> ShardPart {
    ShardPart {
        shard: index,
        cell: c.label(),
        started_unix_s: c.started_unix_s,
        requests: c.requests,
        throughput_rps: c.throughput_rps,
        p99_us: c.latency_us.p99,
        connections_opened: c.connections.opened,
        generator_cpu: c.generator_cpu,
        machine_cpu: c.machine_cpu,
    }
}

/// Every result's stamp, checked: one plan, each shard once, all there.
fn stamps(parts: &[RunResult]) -> Result<Vec<&ShardStamp>, String> {
    let mut stamps = Vec::with_capacity(parts.len());
    for (i, r) in parts.iter().enumerate() {
        stamps.push(r.shard.as_ref().ok_or_else(|| {
            format!(
                "result {} is not a shard (no --shard): shards merge only with the other shards of their plan",
                i + 1
            )
        })?);
    }
    let first = stamps[0];
    let mut seen = vec![None::<usize>; first.count];
    for (i, s) in stamps.iter().enumerate() {
        if s.plan_hash != first.plan_hash || s.count != first.count {
            return Err(format!(
                "result {} is shard {}/{} of another plan (plan hash {}…, the first's {}…)",
                i + 1,
                s.index,
                s.count,
                &s.plan_hash[..s.plan_hash.len().min(12)],
                &first.plan_hash[..first.plan_hash.len().min(12)]
            ));
        }
        let slot = seen
            .get_mut(s.index)
            .ok_or_else(|| format!("result {} claims shard {} of {}", i + 1, s.index, s.count))?;
        if let Some(j) = slot.replace(i) {
            return Err(format!(
                "shard {}/{} is given twice (results {} and {})",
                s.index,
                s.count,
                j + 1,
                i + 1
            ));
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} of {} shards missing: {} (shards count from 0)",
            missing.len(),
            first.count,
            missing.join(", ")
        ));
    }
    Ok(stamps)
}
