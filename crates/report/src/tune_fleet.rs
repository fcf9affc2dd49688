//! The parts of a tune's answer beyond one process's pool: the fleet's
//! proof (`--replicas`) and an adaptive limiter's bounds, as text and HTML.
use crate::format::{esc, fmt_duration_us, fmt_rate};
use poolbench_model::{FleetCheck, TuneResult};
use std::fmt::Write;

/// Text: the fleet's proof, then the adaptive bounds.
pub(crate) fn text(t: &mut String, r: &TuneResult) {
    if let Some(f) = &r.fleet_check {
        let _ = writeln!(t, "{}", fleet_sentence(f));
        for (i, x) in f.rounds.iter().enumerate() {
            let _ = writeln!(
                t,
                "  round {}: one process {} req/s, p99 {}{}; {} processes {} req/s, p99 {}{}",
                i + 1,
                fmt_rate(x.single_rps),
                fmt_duration_us(x.single_p99_us),
                errors(x.single_errors),
                f.replicas,
                fmt_rate(x.fleet_rps),
                fmt_duration_us(x.fleet_p99_us),
                errors(x.fleet_errors),
            );
        }
        if let Some(n) = &f.note {
            let _ = writeln!(t, "  ({n})");
        }
        if let Some(why) = shortfall(r, f) {
            let _ = writeln!(t, "  {why}");
        }
        t.push('\n');
    }
    if let Some(a) = &r.adaptive {
        let _ = writeln!(
            t,
            "For an adaptive limiter: no-load latency {}, start at {} in flight (the knee), at most {} ({}).",
            fmt_duration_us(a.no_load_latency_us),
            a.initial_limit,
            a.max_limit,
            a.max_from
        );
        for s in &a.client_settings {
            let _ = writeln!(t, "  {:<36} {}", s.client, s.setting);
        }
        t.push('\n');
    }
}

/// HTML: the same two sections.
pub(crate) fn html(h: &mut String, r: &TuneResult) {
    if let Some(f) = &r.fleet_check {
        let _ = write!(
            h,
            "<h2>The fleet, run</h2><p id=\"fleet\">{}</p><table><tr><th>round</th><th>one process req/s</th><th>p99</th><th>{} processes req/s</th><th>p99</th></tr>",
            esc(&fleet_sentence(f)),
            f.replicas
        );
        for (i, x) in f.rounds.iter().enumerate() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                fmt_rate(x.single_rps),
                fmt_duration_us(x.single_p99_us),
                fmt_rate(x.fleet_rps),
                fmt_duration_us(x.fleet_p99_us)
            );
        }
        h.push_str("</table>\n");
    }
    if let Some(a) = &r.adaptive {
        let _ = write!(
            h,
            "<h2>For an adaptive limiter</h2><p id=\"adaptive\">No-load latency {}, start at {} in flight (the knee), at most {} ({}).</p><table><tr><th>limiter</th><th>setting</th></tr>",
            fmt_duration_us(a.no_load_latency_us),
            a.initial_limit,
            a.max_limit,
            esc(&a.max_from)
        );
        for s in &a.client_settings {
            let _ = write!(
                h,
                "<tr><td>{}</td><td style=\"text-align:left\"><code>{}</code></td></tr>",
                esc(&s.client),
                esc(&s.setting)
            );
        }
        h.push_str("</table>\n");
    }
}

/// Why a division that does not hold fell short: its replicas hold fewer
/// connections than the one process's pick, and what would not fit.
fn shortfall(r: &TuneResult, f: &FleetCheck) -> Option<String> {
    let fleet = r.fleet.as_ref()?;
    let (pick, per) = (
        r.recommendation.as_ref()?.pool_size as u64,
        fleet.pool_per_replica?,
    );
    let n = f.replicas as u64;
    if f.holds || n * per >= pick {
        return None;
    }
    let need = pick.div_ceil(n);
    Some(match fleet.connection_limit {
        Some(b) if n * need > b => format!(
            "{n} × {per} = {} connections against the one process's {pick}: {need} each ({}) would exceed the fleet's connection limit of {b}; fewer replicas or a higher limit",
            n * per,
            n * need
        ),
        _ => format!(
            "{n} × {per} = {} connections against the one process's {pick}: set {need} each",
            n * per
        ),
    })
}

fn fleet_sentence(f: &FleetCheck) -> String {
    let verdict = match f.holds {
        true => "holds",
        false => "does NOT hold",
    };
    format!(
        "The fleet, run: {} processes of {} each ({} workers in all) carried {:.2}x the throughput of one process with {}, p99 {:.2}x: the division {verdict}.",
        f.replicas, f.replica_strategy, f.workers, f.throughput_ratio, f.single_strategy, f.p99_ratio
    )
}

fn errors(n: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(", {n} errors"),
    }
}
