//! One `CellResult` from the runs of a cell: their recorders merged, their
//! samples, connection counts and server counters combined.
use crate::cell_run::CellOutcome;
use crate::record::Recorder;
use hdrhistogram::Histogram;
use poolbench_model::{
    encode_histogram, mean_ci95, new_histogram, CellResult, CellSpec, Connections, Errors,
    Histograms, LatencyInterval, LoadModel, Plan, PoolCounters, Sample, ServerCounters, Stall,
    Summary, Timeline, TlsFacts,
};
use poolbench_targets::ErrorKind;

/// The runs of a cell, added up.
struct Combined {
    recorder: Recorder,
    hiccups: Histogram<u64>,
    opened_by: Option<f64>,
    measured: f64,
    metrics: Option<PoolCounters>,
    server: Option<ServerCounters>,
    samples: Vec<Sample>,
    unfinished: u64,
    opened_during: u64,
    reopened: u64,
    generator_cpu: Option<f64>,
    machine_cpu: Option<f64>,
    stalls: Vec<Stall>,
    latency_intervals: Vec<LatencyInterval>,
}

fn max(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl Combined {
    fn of(runs: &[(CellOutcome, Option<ServerCounters>)]) -> Combined {
        let mut all = Combined {
            recorder: Recorder::new(),
            hiccups: new_histogram(),
            opened_by: None,
            measured: 0.0,
            metrics: None,
            server: None,
            samples: Vec::new(),
            unfinished: 0,
            opened_during: 0,
            reopened: 0,
            generator_cpu: None,
            machine_cpu: None,
            stalls: Vec::new(),
            latency_intervals: Vec::new(),
        };
        for (o, s) in runs {
            all.add(o, s);
        }
        all
    }

    fn add(&mut self, o: &CellOutcome, s: &Option<ServerCounters>) {
        self.recorder.merge(&o.recorder);
        let _ = self.hiccups.add(&o.hiccups);
        if let Some(d) = o.opened_in_warmup_by {
            self.opened_by = Some(self.opened_by.unwrap_or(0.0).max(d.as_secs_f64()));
        }
        let secs = o.measured.as_secs_f64();
        self.measured += secs;
        self.unfinished += o.unfinished;
        let during = o.metrics.opened.saturating_sub(o.opened_before_measuring);
        self.opened_during += during;
        self.reopened += during.min(o.metrics.opened.saturating_sub(o.metrics.peak_open));
        self.generator_cpu = max(self.generator_cpu, o.generator_cpu);
        self.stalls.extend(o.stalls.iter().copied());
        self.latency_intervals.extend(o.intervals.iter().cloned());
        self.machine_cpu = max(self.machine_cpu, o.machine_cpu);
        if o.samples.is_empty() {
            self.samples.push(Sample {
                throughput_rps: if secs > 0.0 {
                    o.recorder.ok as f64 / secs
                } else {
                    0.0
                },
                p99_us: o.recorder.latency.value_at_quantile(0.99) as f64 / 1000.0,
            });
        } else {
            self.samples.extend(o.samples.iter().copied());
        }
        self.metrics = Some(match self.metrics.take() {
            None => o.metrics.clone(),
            Some(mut m) => {
                let (peak_open, peak_in_use) = (m.peak_open, m.peak_in_use);
                m.merge(&o.metrics);
                m.peak_open = peak_open.max(o.metrics.peak_open);
                m.peak_in_use = peak_in_use.max(o.metrics.peak_in_use);
                m
            }
        });
        self.server = match (self.server, s) {
            (None, s) => *s,
            (Some(a), Some(b)) => Some(a.combine(*b)),
            (a, None) => a,
        };
    }
}

/// Errors by kind and by protocol status code.
fn errors_of(r: &Recorder) -> Errors {
    let mut errors = Errors::default();
    for kind in ErrorKind::ALL {
        let n = r.errors[kind as usize];
        errors.total += n;
        if n > 0 {
            errors.by_kind.insert(kind.name().to_string(), n);
        }
    }
    for (code, n) in &r.codes {
        errors.by_status.insert(code.clone(), *n);
    }
    for (code, m) in &r.messages {
        errors.messages.insert(code.clone(), m.to_string());
    }
    errors
}

/// The raw histograms of a merged recorder, for exact merging later.
fn histograms_of(r: &Recorder, hiccups: &Histogram<u64>, open: bool) -> Histograms {
    Histograms {
        latency_ns: encode_histogram(&r.latency),
        checkout_wait_ns: encode_histogram(&r.checkout),
        request_ns: encode_histogram(&r.request),
        connect_ns: encode_histogram(&r.connect),
        send_lag_ns: match open {
            true => encode_histogram(&r.send_lag),
            false => String::new(),
        },
        generator_hiccups_ns: encode_histogram(hiccups),
        first_byte_ns: encode_if_any(&r.first_byte),
        last_byte_ns: encode_if_any(&r.last_byte),
    }
}

/// A histogram's encoding, or nothing when it holds no value (a protocol
/// that cannot tell).
fn encode_if_any(h: &Histogram<u64>) -> String {
    match h.is_empty() {
        true => String::new(),
        false => encode_histogram(h),
    }
}

/// A histogram's summary, or nothing when it holds no value.
fn summary_if_any(h: &Histogram<u64>) -> Option<Summary> {
    (!h.is_empty()).then(|| Summary::of(h))
}

/// The samples' mean throughput and the 95% confidence half-widths of
/// their throughput and p99.
fn sample_stats(samples: &[Sample]) -> (f64, Option<f64>, Option<f64>) {
    let throughputs: Vec<f64> = samples.iter().map(|s| s.throughput_rps).collect();
    let (throughput, throughput_ci95) = mean_ci95(&throughputs);
    let (_, p99_ci95_us) = mean_ci95(&samples.iter().map(|s| s.p99_us).collect::<Vec<_>>());
    (throughput, throughput_ci95, p99_ci95_us)
}

/// The client's connection counts over the cell; requests per
/// connection count the warm-up's and those after the window too.
fn connections_of(
    all: &Combined,
    metrics: &PoolCounters,
    idle_at_end: u64,
    completed: u64,
) -> Connections {
    let r = &all.recorder;
    Connections {
        opened: metrics.opened,
        closed: metrics.closed(),
        peak_open: metrics.peak_open,
        idle_at_end,
        requests_per_connection: match metrics.opened {
            0 => 0.0,
            n => (completed + r.warmup + r.outside) as f64 / n as f64,
        },
        opened_in_warmup_by_s: all.opened_by,
    }
}

/// Open loop: the rate asked for.
fn requested_rate(load: &LoadModel) -> Option<f64> {
    match load {
        LoadModel::Open { rate, .. } => Some(*rate),
        _ => None,
    }
}

/// With `--start-at`: how late the latest run started against its slot, ms.
fn latest_start(runs: &[(CellOutcome, Option<ServerCounters>)]) -> Option<f64> {
    runs.iter()
        .filter_map(|(o, _)| o.schedule_lag)
        .max()
        .map(|d| d.as_secs_f64() * 1000.0)
}

/// The TLS handshakes of every run, added up.
fn tls_of(runs: &[(CellOutcome, Option<ServerCounters>)]) -> Option<TlsFacts> {
    let mut all: Option<TlsFacts> = None;
    for t in runs.iter().filter_map(|(o, _)| o.tls.as_ref()) {
        match &mut all {
            Some(a) => a.combine(t),
            None => all = Some(t.clone()),
        }
    }
    all
}

/// `n` over `seconds` (0 for no time).
fn per_second(n: u64, seconds: f64) -> f64 {
    match seconds > 0.0 {
        true => n as f64 / seconds,
        false => 0.0,
    }
}

/// The first run's timeline, and the idle connections it left.
fn first_timeline(first: Option<&CellOutcome>) -> (Timeline, u64) {
    first.map_or((Default::default(), 0), |o| {
        (o.timeline.clone(), o.idle_at_end)
    })
}

/// The latency per second, kept with `--hdr-log` or a ramp.
fn intervals_kept(plan: &Plan, intervals: Vec<LatencyInterval>) -> Vec<LatencyInterval> {
    // Kept for a ramp too: the analysis summarizes each second from them.
    match plan.hdr_intervals || plan.ramp.is_some() {
        true => intervals,
        false => Vec::new(),
    }
}

/// The cell's result from its runs (each with the server's counters over
/// it, where read). Findings, SLO breaches and ramp summaries are the
/// analysis's to add.
pub(crate) fn cell_result(
    cell: CellSpec,
    plan: &Plan,
    runs: Vec<(CellOutcome, Option<ServerCounters>)>,
) -> CellResult {
    let all = Combined::of(&runs);
    let r = &all.recorder;
    let metrics = all.metrics.clone().unwrap_or_default();
    let errors = errors_of(r);
    let completed = r.ok + errors.total;
    let (throughput, throughput_ci95, p99_ci95_us) = sample_stats(&all.samples);
    let latency = Summary::of(&r.latency);
    let achieved_rate = per_second(completed, all.measured);
    let open = matches!(plan.load, LoadModel::Open { .. });
    let first = runs.first().map(|(o, _)| o);
    let (timeline, idle_at_end) = first_timeline(first);
    CellResult {
        interrupted: runs.iter().any(|(o, _)| o.interrupted),
        resent: runs.iter().map(|(o, _)| o.resent).sum(),
        idle_reuse: poolbench_model::IdleReuse::sum(runs.iter().map(|(o, _)| &o.idle_reuse)),
        slo_breaches: None,
        strategy: cell.strategy.to_string(),
        concurrency: cell.concurrency,
        pool_size: cell.strategy.size(),
        connection_cap: cell.strategy.connection_cap(),
        model: plan.load.name().to_string(),
        reps: runs.len(),
        duration_s: all.measured,
        requests: completed,
        ok: r.ok,
        warmup_requests: r.warmup,
        after_end: r.outside,
        unfinished: all.unfinished,
        errors,
        throughput_rps: throughput,
        throughput_ci95,
        p99_ci95_us,
        samples: all.samples.clone(),
        requested_rate: requested_rate(&plan.load),
        achieved_rate,
        achieved_concurrency: achieved_rate * latency.mean / 1e6,
        late: r.late,
        dropped: r.dropped,
        latency_us: latency,
        latency_uncorrected_us: open.then(|| Summary::of(&r.request)),
        send_lag_us: open.then(|| Summary::of(&r.send_lag)),
        generator_hiccups_us: Summary::of(&all.hiccups),
        checkout_wait_us: Summary::of(&r.checkout),
        connect_us: Summary::of(&r.connect),
        request_us: Summary::of(&r.request),
        first_byte_us: summary_if_any(&r.first_byte),
        last_byte_us: summary_if_any(&r.last_byte),
        behind_us: summary_if_any(&r.behind),
        body_bytes: r.bytes,
        connections: connections_of(&all, &metrics, idle_at_end, completed),
        pool: metrics,
        server: all.server,
        tls: tls_of(&runs),
        generator_cpu: all.generator_cpu,
        machine_cpu: all.machine_cpu,
        opened_during_measurement: all.opened_during,
        reopened: all.reopened,
        timeline,
        stalls: all.stalls.clone(),
        histograms: histograms_of(r, &all.hiccups, open),
        latency_intervals: intervals_kept(plan, all.latency_intervals),
        started_unix_s: first.map(|o| o.started_unix_s),
        schedule_lag_ms: latest_start(&runs),
        shards: Vec::new(),
        ramp: None,
    }
}
