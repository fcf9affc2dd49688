//! A comparison in Markdown (to paste in a pull request) and in HTML (one
//! self-contained page: base and new side by side per cell, as bars).
use crate::charts::short;
use crate::compare::{CellChange, Comparison};
use crate::format::esc;
use crate::format::fmt_rate;
use crate::html::STYLE;
use poolbench_model::cell_label;
use std::fmt::Write;

fn significance(x: &CellChange) -> String {
    match (x.throughput_significant, x.p99_significant) {
        (None, _) | (_, None) => "not significant (fewer than 3 reps)".to_string(),
        (Some(t), Some(p)) => format!(
            "throughput {}, p99 {}",
            if t { "significant" } else { "not significant" },
            if p { "significant" } else { "not significant" }
        ),
    }
}

/// The comparison as a Markdown table.
pub fn render_comparison_markdown(c: &Comparison) -> String {
    let mut out = format!(
        "## poolbench comparison\n\nbase `{}` · new `{}`\n\n",
        c.base, c.new
    );
    out.push_str(
        "| strategy | c | base req/s | new req/s | req/s | p50 | p99 | errors | significance |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for x in &c.cells {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:+.1}% | {:+.1}% | {:+.1}% | {:+.2} pp | {} |",
            x.strategy,
            x.concurrency,
            fmt_rate(x.base_throughput_rps),
            fmt_rate(x.new_throughput_rps),
            x.throughput_pct,
            x.p50_pct,
            x.p99_pct,
            x.error_rate_pp,
            significance(x)
        );
    }
    if !c.unmatched.is_empty() {
        let _ = writeln!(out, "\nUnmatched: {}", c.unmatched.join(", "));
    }
    out
}

/// The comparison as one HTML page: a table, and per metric a chart with
/// base and new side by side for every cell.
pub fn render_comparison_html(c: &Comparison) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>poolbench comparison</title><style>{STYLE}</style></head><body>\n\
         <h1>poolbench comparison</h1><p class=\"muted\">base {} · new {}</p>\n",
        esc(&c.base),
        esc(&c.new)
    );
    h.push_str("<div class=\"charts\">\n");
    h.push_str(&bars(
        c,
        "throughput (req/s)",
        |x| x.base_throughput_rps,
        |x| x.new_throughput_rps,
    ));
    h.push_str(&bars(
        c,
        "p99 latency (ms)",
        |x| x.base_p99_us / 1000.0,
        |x| x.new_p99_us / 1000.0,
    ));
    h.push_str("</div>\n<table><tr><th>strategy</th><th>c</th><th>base req/s</th><th>new req/s</th><th>req/s</th><th>p50</th><th>p99</th><th>errors</th><th>significance</th></tr>\n");
    for x in &c.cells {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}%</td><td>{:+.1}%</td><td>{:+.1}%</td><td>{:+.2} pp</td><td>{}</td></tr>",
            esc(&x.strategy),
            x.concurrency,
            fmt_rate(x.base_throughput_rps),
            fmt_rate(x.new_throughput_rps),
            x.throughput_pct,
            x.p50_pct,
            x.p99_pct,
            x.error_rate_pp,
            esc(&significance(x))
        );
    }
    h.push_str("</table>\n");
    if !c.unmatched.is_empty() {
        let _ = writeln!(h, "<p>Unmatched: {}</p>", esc(&c.unmatched.join(", ")));
    }
    h.push_str("</body></html>\n");
    h
}

/// A pair of bars per cell (base grey, new blue); values may be negative.
fn bars(
    c: &Comparison,
    title: &str,
    base: impl Fn(&CellChange) -> f64,
    new: impl Fn(&CellChange) -> f64,
) -> String {
    let (w, hgt, top, bottom) = (520.0, 260.0, 28.0, 60.0);
    let n = c.cells.len().max(1) as f64;
    let values: Vec<f64> = c.cells.iter().flat_map(|x| [base(x), new(x)]).collect();
    let hi = values.iter().copied().fold(0.0, f64::max);
    let lo = values.iter().copied().fold(0.0, f64::min);
    let span = (hi - lo).max(1e-9) * 1.1;
    let y = |v: f64| top + (hi * 1.05 - v) / span * (hgt - top - bottom);
    let slot = (w - 40.0) / n;
    let bw = (slot / 2.0 - 4.0).max(1.0);
    let mut s = format!(
        "<svg class=\"chart compare\" role=\"img\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-bars=\"{}\">\
         <text x=\"20\" y=\"16\" font-weight=\"600\">{}</text>\
         <line class=\"axis\" x1=\"20\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\"/>\
         <text x=\"{}\" y=\"16\" text-anchor=\"end\"><tspan fill=\"#6e7781\" style=\"fill:#6e7781\">■ base</tspan> <tspan fill=\"#0969da\" style=\"fill:#0969da\">■ new</tspan></text>",
        2 * c.cells.len(),
        esc(title),
        y(0.0),
        w - 20.0,
        y(0.0),
        w - 20.0
    );
    for (i, x) in c.cells.iter().enumerate() {
        let x0 = 20.0 + i as f64 * slot + 2.0;
        for (j, (v, colour)) in [(base(x), "#6e7781"), (new(x), "#0969da")]
            .into_iter()
            .enumerate()
        {
            let (y0, y1) = (y(v.max(0.0)), y(v.min(0.0)));
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{y0:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{colour}\"><title>{}</title></rect>",
                x0 + j as f64 * (bw + 2.0),
                (y1 - y0).max(0.5),
                short(v)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            x0 + bw,
            hgt - bottom + 14.0 + 12.0 * (i % 3) as f64,
            esc(&cell_label(&x.strategy, x.concurrency))
        );
    }
    s.push_str("</svg>\n");
    s
}
