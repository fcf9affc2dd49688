//! One `CellResult` from the runs of a cell.
use crate::batch::Sample;
use crate::cell::CellOutcome;
use crate::load::LoadModel;
use crate::plan::{CellSpec, Plan};
use crate::probe::ServerCounters;
use crate::record::{new_histogram, Recorder, Summary};
use crate::result::{CellResult, Connections, Errors, Histograms};
use crate::stats::mean_ci95;
use poolbench_pool::{MetricsSnapshot, StrategySpec};
use poolbench_targets::ErrorKind;

/// Most connections a strategy may open at concurrency `c`.
pub(crate) fn connection_cap(s: &StrategySpec) -> Option<usize> {
    match *s {
        StrategySpec::PerRequest | StrategySpec::TakeOrCreate(_) => None,
        StrategySpec::Shared => Some(1),
        StrategySpec::Elastic(n, m) => Some(n.unwrap_or(1) + m.unwrap_or(0)),
        other => other.size(),
    }
}

pub(crate) fn cell_result(
    cell: CellSpec,
    plan: &Plan,
    runs: Vec<(CellOutcome, Option<ServerCounters>)>,
) -> CellResult {
    let mut r = Recorder::new();
    let mut hiccups = new_histogram();
    let mut opened_by = None::<f64>;
    let mut measured = 0.0;
    let mut metrics: Option<MetricsSnapshot> = None;
    let mut server: Option<ServerCounters> = None;
    let mut samples = Vec::new();
    let (mut unfinished, mut opened_during, mut reopened, mut generator_cpu) =
        (0, 0, 0, None::<f64>);
    let mut stalls = Vec::new();
    let mut latency_intervals = Vec::new();
    let mut machine_cpu = None::<f64>;
    let reps = runs.len();
    let (timeline, idle_at_end) = runs
        .first()
        .map(|(o, _)| (o.timeline.clone(), o.idle_at_end))
        .unwrap_or_default();
    for (o, s) in &runs {
        r.merge(&o.recorder);
        let _ = hiccups.add(&o.hiccups);
        if let Some(d) = o.opened_in_warmup_by {
            opened_by = Some(opened_by.unwrap_or(0.0).max(d.as_secs_f64()));
        }
        let secs = o.measured.as_secs_f64();
        measured += secs;
        unfinished += o.unfinished;
        let during = o.metrics.opened.saturating_sub(o.opened_before_measuring);
        opened_during += during;
        reopened += during.min(o.metrics.opened.saturating_sub(o.metrics.peak_open));
        generator_cpu = match (generator_cpu, o.generator_cpu) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        stalls.extend(o.stalls.iter().copied());
        latency_intervals.extend(o.intervals.iter().cloned());
        machine_cpu = match (machine_cpu, o.machine_cpu) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if o.samples.is_empty() {
            samples.push(Sample {
                throughput_rps: if secs > 0.0 {
                    o.recorder.ok as f64 / secs
                } else {
                    0.0
                },
                p99_us: o.recorder.latency.value_at_quantile(0.99) as f64 / 1000.0,
            });
        } else {
            samples.extend(o.samples.iter().copied());
        }
        metrics = Some(match metrics {
            None => o.metrics.clone(),
            Some(mut m) => {
                let (peak_open, peak_in_use) = (m.peak_open, m.peak_in_use);
                m.merge(&o.metrics);
                m.peak_open = peak_open.max(o.metrics.peak_open);
                m.peak_in_use = peak_in_use.max(o.metrics.peak_in_use);
                m
            }
        });
        server = match (server, s) {
            (None, s) => *s,
            (Some(a), Some(b)) => Some(a.combine(*b)),
            (a, None) => a,
        };
    }
    let metrics = metrics.unwrap_or_default();

    let mut errors = Errors::default();
    for kind in ErrorKind::ALL {
        let n = r.errors[kind as usize];
        errors.total += n;
        if n > 0 {
            errors.by_kind.insert(kind.name().to_string(), n);
        }
    }
    for (code, n) in &r.codes {
        errors.by_status.insert(code.to_string(), *n);
    }
    let completed = r.ok + errors.total;
    let (throughput, throughput_ci95) =
        mean_ci95(&samples.iter().map(|s| s.throughput_rps).collect::<Vec<_>>());
    let (_, p99_ci95_us) = mean_ci95(&samples.iter().map(|s| s.p99_us).collect::<Vec<_>>());
    let latency = Summary::of(&r.latency);
    let achieved_rate = if measured > 0.0 {
        completed as f64 / measured
    } else {
        0.0
    };
    let open = matches!(plan.load, LoadModel::Open { .. });
    let interrupted = runs.iter().any(|(o, _)| o.interrupted);
    let resent = runs.iter().map(|(o, _)| o.resent).sum();
    CellResult {
        interrupted,
        resent,
        slo_breaches: None,
        strategy: cell.strategy.to_string(),
        concurrency: cell.concurrency,
        pool_size: cell.strategy.size(),
        connection_cap: connection_cap(&cell.strategy),
        model: plan.load.name().to_string(),
        reps,
        duration_s: measured,
        requests: completed,
        ok: r.ok,
        warmup_requests: r.warmup,
        after_end: r.outside,
        unfinished,
        errors,
        throughput_rps: throughput,
        throughput_ci95,
        p99_ci95_us,
        samples,
        requested_rate: match plan.load {
            LoadModel::Open { rate, .. } => Some(rate),
            _ => None,
        },
        achieved_rate,
        achieved_concurrency: achieved_rate * latency.mean / 1e6,
        late: r.late,
        dropped: r.dropped,
        latency_us: latency,
        latency_uncorrected_us: open.then(|| Summary::of(&r.request)),
        send_lag_us: open.then(|| Summary::of(&r.send_lag)),
        generator_hiccups_us: Summary::of(&hiccups),
        checkout_wait_us: Summary::of(&r.checkout),
        connect_us: Summary::of(&r.connect),
        request_us: Summary::of(&r.request),
        connections: Connections {
            opened: metrics.opened,
            closed: metrics.closed(),
            peak_open: metrics.peak_open,
            idle_at_end,
            requests_per_connection: if metrics.opened > 0 {
                (completed + r.warmup + r.outside) as f64 / metrics.opened as f64
            } else {
                0.0
            },
            opened_in_warmup_by_s: opened_by,
        },
        pool: metrics,
        server,
        generator_cpu,
        machine_cpu,
        opened_during_measurement: opened_during,
        reopened,
        timeline: timeline.clone(),
        stalls,
        histograms: Histograms::of(&r, &hiccups, open),
        // Kept for a ramp too: merged shards' ramps need each second's p99.
        latency_intervals: match plan.hdr_intervals || plan.ramp.is_some() {
            true => latency_intervals,
            false => Vec::new(),
        },
        started_unix_s: runs.first().map(|(o, _)| o.started_unix_s),
        schedule_lag_ms: runs
            .iter()
            .filter_map(|(o, _)| o.schedule_lag)
            .max()
            .map(|d| d.as_secs_f64() * 1000.0),
        shards: Vec::new(),
        ramp: plan.ramp.as_ref().zip(runs.first()).map(|(ramp, (o, _))| {
            crate::ramp::summarize(
                ramp,
                &timeline,
                &o.intervals,
                o.measured.as_secs_f64(),
                plan.slo.as_ref().and_then(|s| s.p99_us),
            )
        }),
    }
}
