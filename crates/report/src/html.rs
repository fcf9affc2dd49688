//! The HTML report: one self-contained file (inline CSS and SVG drawn
//! here, no script, nothing fetched), readable in light and dark schemes.
//! Charts of throughput and p99 against concurrency per strategy, the
//! checkout wait's share of latency, each cell's timeline (successes,
//! errors, in flight per 100 ms) with stalls and outages marked, the
//! latency spectrum per cell on demand, the pitfalls and the
//! recommendation.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_engine::{CellResult, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #57606a; --grid: #d0d7de; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --grid: #30363d; --warn: #d29922; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; } .muted { color: var(--muted); }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: .2em .7em; border-bottom: 1px solid var(--grid); text-align: right; }
td:first-child, th:first-child { text-align: left; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; } svg.chart text { fill: var(--fg); font-size: 11px; }
svg.chart .axis { stroke: var(--grid); } .pitfall { color: var(--warn); font-weight: 600; }
.rec { border-left: 4px solid #2da44e; padding: .3em .8em; } .norec { border-left: 4px solid var(--warn); padding: .3em .8em; }
details { margin: .4em 0; } summary { cursor: pointer; }
";

/// A colour per series, readable on both backgrounds.
const COLOURS: [&str; 8] = [
    "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#0a7c86", "#e16f24", "#6e7781",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

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
    match (&result.recommendation, &result.no_recommendation) {
        (Some(r), _) => {
            let _ = writeln!(
                h,
                "<p class=\"rec\"><b>Recommendation: {}</b> — {}</p>",
                esc(&r.strategy),
                esc(&r.reason)
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
    pitfalls(&mut h, result);
    tables(&mut h, result);
    cells(&mut h, result);
    h.push_str("</body></html>\n");
    h
}

/// Cells of each strategy, by concurrency.
fn series(result: &RunResult) -> BTreeMap<&str, Vec<&CellResult>> {
    let mut m: BTreeMap<&str, Vec<&CellResult>> = BTreeMap::new();
    for c in &result.cells {
        m.entry(c.strategy.as_str()).or_default().push(c);
    }
    for v in m.values_mut() {
        v.sort_by_key(|c| c.concurrency);
    }
    m
}

/// One value per cell against concurrency (log scale when it spans more
/// than a factor of 10), a line per strategy.
fn line_chart(result: &RunResult, title: &str, value: impl Fn(&CellResult) -> f64) -> String {
    let (w, hgt, left, bottom) = (500.0, 280.0, 60.0, 40.0);
    let all = series(result);
    let levels: Vec<f64> = result.cells.iter().map(|c| c.concurrency as f64).collect();
    let (lo, hi) = levels
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let log = hi / lo.max(1.0) > 10.0;
    let xv = |c: f64| if log { c.max(1.0).ln() } else { c };
    let (x0, x1) = (xv(lo), xv(hi));
    let ymax = result
        .cells
        .iter()
        .map(&value)
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let x = |c: f64| match x1 > x0 {
        true => left + (xv(c) - x0) / (x1 - x0) * (w - left - 20.0),
        false => left + (w - left - 20.0) / 2.0,
    };
    let y = |v: f64| hgt - bottom - v / ymax * (hgt - bottom - 30.0);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" role=\"img\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-series=\"{}\">\
         <text x=\"{left}\" y=\"16\" font-weight=\"600\">{}</text>\
         <line class=\"axis\" x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\
         <line class=\"axis\" x1=\"{left}\" y1=\"30\" x2=\"{left}\" y2=\"{}\"/>\
         <text x=\"4\" y=\"34\">{}</text><text x=\"4\" y=\"{}\">0</text>",
        all.len(),
        esc(title),
        hgt - bottom,
        w - 20.0,
        hgt - bottom,
        hgt - bottom,
        short(ymax),
        hgt - bottom
    );
    let mut ticks: Vec<usize> = result.cells.iter().map(|c| c.concurrency).collect();
    ticks.sort_unstable();
    ticks.dedup();
    for t in ticks {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t}</text>",
            x(t as f64),
            hgt - bottom + 16.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"muted\">concurrency{}</text>",
        w - 20.0,
        hgt - 4.0,
        if log { " (log)" } else { "" }
    );
    for (i, (name, cells)) in all.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<String> = cells
            .iter()
            .map(|c| format!("{:.1},{:.1}", x(c.concurrency as f64), y(value(c))))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
            points.join(" "),
            esc(name)
        );
        for p in &points {
            let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                s,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"3\" fill=\"{colour}\"/>"
            );
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"{colour}\" style=\"fill:{colour}\">{}</text>",
            w - 150.0,
            34.0 + 14.0 * i as f64,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn short(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v if v >= 10.0 => format!("{v:.0}"),
        v => format!("{v:.2}"),
    }
}

fn pitfalls(h: &mut String, result: &RunResult) {
    h.push_str("<h2>Pitfalls</h2>\n");
    if result.pitfalls.is_empty() {
        h.push_str("<p>None found.</p>\n");
    }
    for p in &result.pitfalls {
        let _ = write!(
            h,
            "<details><summary><span class=\"pitfall\">{}</span>: {} <span class=\"muted\">({} line{})</span></summary><ul>",
            esc(&p.id),
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
            "<details class=\"cell\"><summary>{} c={} · {} req/s</summary>\
             <table><tr><th>latency</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\
             <tr><td>total</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
            esc(&c.strategy),
            c.concurrency,
            fmt_rate(c.throughput_rps),
            fmt_duration_us(l.p50),
            fmt_duration_us(l.p90),
            fmt_duration_us(l.p99),
            fmt_duration_us(l.p999),
            fmt_duration_us(l.max)
        );
        h.push_str(&timeline(c));
        h.push_str("</details>\n");
    }
}

/// Successes and errors per bucket as bars, in flight as a line; stalls
/// shaded.
fn timeline(c: &CellResult) -> String {
    let t = &c.timeline;
    let n = t.ok.len().max(1);
    let (w, hgt) = (900.0, 120.0);
    let bw = w / n as f64;
    let top =
        t.ok.iter()
            .zip(&t.errors)
            .map(|(a, b)| a + b)
            .max()
            .unwrap_or(0)
            .max(1) as f64;
    let inflight_top = t.inflight.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mut s = format!(
        "<svg class=\"chart timeline\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-buckets=\"{}\">",
        t.ok.len()
    );
    let bucket_s = t.bucket_ms as f64 / 1000.0;
    for st in &c.stalls {
        let from = (st.start_s / bucket_s + t.measure_from_bucket as f64) * bw;
        let _ = write!(
            s,
            "<rect x=\"{from:.1}\" y=\"0\" width=\"{:.1}\" height=\"{hgt}\" fill=\"#bf8700\" opacity=\"0.2\"><title>stall</title></rect>",
            st.duration_s / bucket_s * bw
        );
    }
    for (i, (&ok, &err)) in t.ok.iter().zip(&t.errors).enumerate() {
        let hok = ok as f64 / top * (hgt - 10.0);
        let herr = err as f64 / top * (hgt - 10.0);
        let x = i as f64 * bw;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{hok:.1}\" fill=\"#1a7f37\"/>",
            hgt - hok,
            (bw - 1.0).max(0.5)
        );
        if err > 0 {
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{herr:.1}\" fill=\"#cf222e\"/>",
                hgt - hok - herr,
                (bw - 1.0).max(0.5)
            );
        }
    }
    let points: Vec<String> = t
        .inflight
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            format!(
                "{:.1},{:.1}",
                (i as f64 + 0.5) * bw,
                hgt - v as f64 / inflight_top * (hgt - 10.0)
            )
        })
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\" points=\"{}\"><title>in flight</title></polyline>\
         <text x=\"4\" y=\"12\">per {} ms: successes (green), errors (red), in flight (blue line)</text></svg>",
        points.join(" "),
        t.bucket_ms
    );
    s
}
