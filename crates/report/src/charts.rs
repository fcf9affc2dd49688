//! The SVG charts of the HTML reports, drawn here: lines against
//! concurrency per strategy, a cell's timeline, a cell's latency spectrum.
use crate::format::esc;
use poolbench_model::{decode_histogram, CellResult, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A colour per series, readable on both backgrounds.
pub(crate) const COLOURS: [&str; 8] = [
    "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#0a7c86", "#e16f24", "#6e7781",
];

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
pub(crate) fn line_chart(
    result: &RunResult,
    title: &str,
    value: impl Fn(&CellResult) -> f64,
) -> String {
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
    let mut s = axes(result, title, all.len(), ymax, log, &x);
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

/// The chart's frame: title, axes, the y range, a tick per concurrency.
fn axes(
    result: &RunResult,
    title: &str,
    series: usize,
    ymax: f64,
    log: bool,
    x: &impl Fn(f64) -> f64,
) -> String {
    let (w, hgt, left, bottom) = (500.0, 280.0, 60.0, 40.0);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" role=\"img\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-series=\"{}\">\
         <text x=\"{left}\" y=\"16\" font-weight=\"600\">{}</text>\
         <line class=\"axis\" x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\
         <line class=\"axis\" x1=\"{left}\" y1=\"30\" x2=\"{left}\" y2=\"{}\"/>\
         <text x=\"4\" y=\"34\">{}</text><text x=\"4\" y=\"{}\">0</text>",
        series,
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
    s
}

pub(crate) fn short(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v if v >= 10.0 => format!("{v:.0}"),
        v => format!("{v:.2}"),
    }
}

/// The cell's latency percentile spectrum, as HdrHistogram plots it:
/// latency against 1/(1−percentile) on a log scale, p0 to p99.99 (and the
/// max where there are enough samples).
pub(crate) fn spectrum_chart(c: &CellResult) -> String {
    let Ok(h) = decode_histogram(&c.histograms.latency_ns) else {
        return String::new();
    };
    if h.is_empty() {
        return String::new();
    }
    let (w, hgt, left, bottom) = (600.0, 240.0, 60.0, 36.0);
    // Decades of 1/(1-q): 0 is p0, 4 is p99.99.
    const DECADES: f64 = 4.0;
    let points: Vec<(f64, f64)> = h
        .iter_quantiles(5)
        .map(|v| (v.quantile_iterated_to(), v.value_iterated_to() as f64 / 1e6))
        .filter(|(q, _)| *q < 1.0)
        .map(|(q, ms)| ((1.0 / (1.0 - q)).log10().min(DECADES), ms))
        .collect();
    let ymax = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-6) * 1.1;
    let x = |d: f64| left + d / DECADES * (w - left - 20.0);
    let y = |v: f64| hgt - bottom - v / ymax * (hgt - bottom - 24.0);
    let mut s = format!(
        "<svg class=\"chart spectrum\" role=\"img\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-points=\"{}\">\
         <text x=\"{left}\" y=\"14\" font-weight=\"600\">latency spectrum (ms, HdrHistogram)</text>\
         <line class=\"axis\" x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\
         <line class=\"axis\" x1=\"{left}\" y1=\"24\" x2=\"{left}\" y2=\"{}\"/>\
         <text x=\"4\" y=\"28\">{}</text><text x=\"4\" y=\"{}\">0</text>",
        points.len(),
        hgt - bottom,
        w - 20.0,
        hgt - bottom,
        hgt - bottom,
        short(ymax),
        hgt - bottom
    );
    for (d, label) in [
        (0.0, "p0"),
        (1.0, "p90"),
        (2.0, "p99"),
        (3.0, "p99.9"),
        (4.0, "p99.99"),
    ] {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            x(d),
            hgt - bottom + 16.0
        );
    }
    let line: Vec<String> = points
        .iter()
        .map(|&(d, v)| format!("{:.1},{:.1}", x(d), y(v)))
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"muted\">percentile (log scale of 1/(1−p)); max {:.3} ms</text></svg>",
        COLOURS[0],
        line.join(" "),
        esc(&c.label()),
        w - 20.0,
        hgt - 4.0,
        h.max() as f64 / 1e6
    );
    s
}
