//! The HTML report: one self-contained file (inline CSS and SVG drawn
//! here, no script, nothing fetched), readable in light and dark schemes.
//! Charts of throughput and p99 against concurrency per strategy, the
//! checkout wait's share of latency, each cell's timeline (successes,
//! errors, in flight per 100 ms) with stalls and outages marked, the
//! latency spectrum per cell on demand, the findings and the
//! recommendation.
use crate::charts::{line_chart, spectrum_chart};
use crate::format::{esc, fmt_duration_us, fmt_rate};
use crate::timeline_chart::timeline;
use poolbench_model::{CellResult, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #57606a; --grid: #d0d7de; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --grid: #30363d; --warn: #d29922; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; } .muted { color: var(--muted); }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: .2em .7em; border-bottom: 1px solid var(--grid); text-align: right; }
td:first-child, th:first-child { text-align: left; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; } svg.chart text { fill: var(--fg); font-size: 11px; }
svg.chart .axis { stroke: var(--grid); } .finding { color: var(--warn); font-weight: 600; }
.rec { border-left: 4px solid #2da44e; padding: .3em .8em; } .norec { border-left: 4px solid var(--warn); padding: .3em .8em; }
details { margin: .4em 0; } summary { cursor: pointer; }
";

/// The whole result as one HTML page.
pub fn render_html(result: &RunResult) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>poolbench · {}</title><style>{STYLE}</style></head><body>\n",
        esc(&result.target)
    );
    let c = &result.config;
    let _ = writeln!(
        h,
        "<h1>poolbench · {}</h1><p class=\"muted\">poolbench {} · {} cores ({}) · started {} · {} s per cell after {} s warm-up · {} cell(s){}</p>",
        esc(&result.target),
        esc(&result.machine.poolbench_version),
        result.machine.cores,
        esc(&result.machine.os),
        esc(&result.started_at),
        c.duration.as_secs_f64(),
        c.warmup.as_secs_f64(),
        result.cells.len(),
        match &result.interrupted {
            Some(s) => format!(" · <b>interrupted by {}</b>", esc(s)),
            None => String::new(),
        }
    );
    match (&result.recommendation, &result.reason) {
        (Some(r), _) => {
            let _ = writeln!(
                h,
                "<p class=\"rec\"><b>Recommendation: {}</b> — {}</p>",
                esc(&r.strategy),
                esc(&r.why)
            );
        }
        (None, Some(why)) => {
            let _ = writeln!(
                h,
                "<p class=\"norec\"><b>No recommendation:</b> {}</p>",
                esc(why)
            );
        }
        _ => {}
    }
    h.push_str(&crate::skipped::html(result));
    h.push_str("<h2>Scaling</h2><div class=\"charts\">\n");
    h.push_str(&line_chart(result, "throughput (req/s)", |c| {
        c.throughput_rps
    }));
    h.push_str(&line_chart(result, "p50 latency (ms)", |c| {
        c.latency_us.p50 / 1000.0
    }));
    h.push_str(&line_chart(result, "p99 latency (ms)", |c| {
        c.latency_us.p99 / 1000.0
    }));
    h.push_str(&line_chart(
        result,
        "checkout wait, % of latency",
        |c| match c.latency_us.mean > 0.0 {
            true => 100.0 * c.checkout_wait_us.mean / c.latency_us.mean,
            false => 0.0,
        },
    ));
    h.push_str("</div>\n");
    findings_section(&mut h, result);
    tables(&mut h, result);
    cells(&mut h, result);
    h.push_str("</body></html>\n");
    h
}

fn findings_section(h: &mut String, result: &RunResult) {
    h.push_str("<h2>Findings</h2>\n");
    if result.findings.is_empty() {
        h.push_str("<p>None found.</p>\n");
    }
    for p in &result.findings {
        let _ = write!(
            h,
            "<details><summary><span class=\"finding\">{}</span>: {} <span class=\"muted\">({} line{})</span></summary><ul>",
            esc(p.id.as_str()),
            esc(&p.title),
            p.evidence.len(),
            if p.evidence.len() == 1 { "" } else { "s" }
        );
        for e in &p.evidence {
            let _ = write!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul></details>\n");
    }
}

fn tables(h: &mut String, result: &RunResult) {
    let mut by_level: BTreeMap<usize, Vec<&CellResult>> = BTreeMap::new();
    for c in &result.cells {
        by_level.entry(c.concurrency).or_default().push(c);
    }
    h.push_str("<h2>Strategies</h2>\n");
    for (level, cells) in by_level {
        let _ = write!(
            h,
            "<h3>c={level}</h3><table><tr><th>strategy</th><th>req/s</th><th>mean</th><th>p50</th><th>p99</th><th>wait p99</th><th>errors</th><th>conns</th><th>resent</th></tr>"
        );
        for c in cells {
            let _ = write!(
                h,
                "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}%</td><td>{}</td><td>{}</td></tr>",
                esc(&c.strategy),
                if c.interrupted { " (interrupted)" } else { "" },
                fmt_rate(c.throughput_rps),
                fmt_duration_us(c.latency_us.mean),
                fmt_duration_us(c.latency_us.p50),
                fmt_duration_us(c.latency_us.p99),
                fmt_duration_us(c.checkout_wait_us.p99),
                c.error_rate() * 100.0,
                c.connections.opened,
                c.resent
            );
        }
        h.push_str("</table>\n");
    }
}

fn cells(h: &mut String, result: &RunResult) {
    h.push_str("<h2>Cells</h2>\n");
    for c in &result.cells {
        let l = &c.latency_us;
        let _ = write!(
            h,
            "<details class=\"cell\"><summary>{} · {} req/s</summary>\
             <table><tr><th>latency</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\
             <tr><td>total</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
            esc(&c.label()),
            fmt_rate(c.throughput_rps),
            fmt_duration_us(l.p50),
            fmt_duration_us(l.p90),
            fmt_duration_us(l.p99),
            fmt_duration_us(l.p999),
            fmt_duration_us(l.max)
        );
        h.push_str(&timeline(c));
        ramp_table(h, c);
        h.push_str(&spectrum_chart(c));
        h.push_str("</details>\n");
    }
}

/// A ramped cell, second by second.
fn ramp_table(h: &mut String, c: &CellResult) {
    let Some(r) = &c.ramp else {
        return;
    };
    let target = match c.requested_rate.is_some() {
        true => "rate",
        false => "concurrency",
    };
    let _ = write!(
        h,
        "<table class=\"ramp\"><tr><th>second</th><th>{target}</th><th>req/s</th><th>p99</th><th>errors</th><th>connections open</th><th>checkout wait (mean)</th></tr>"
    );
    for s in &r.seconds {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            s.t_s,
            s.target,
            fmt_rate(s.throughput_rps),
            fmt_duration_us(s.p99_us),
            s.errors,
            s.connections_open,
            fmt_duration_us(s.checkout_wait_mean_us)
        );
    }
    h.push_str("</table>");
    if let Some(at) = r.saturated_at {
        let _ = write!(
            h,
            "<p>Throughput stopped growing at {target} ≈ {at:.0}.</p>"
        );
    }
    if let Some(at) = r.slo_p99_crossed_at {
        let _ = write!(h, "<p>p99 crossed the SLO at {target} ≈ {at:.0}.</p>");
    }
}
