//! `tune --find-rate`'s HTML report: one self-contained page (inline CSS
//! and SVG, no script): the answer, the rate curve (completions and p99
//! against the rate asked, the SLO's line, each point marked by its
//! verdict), every point.
use crate::charts::short;
use crate::format::esc;
use crate::html::STYLE;
use crate::rate_views::{point_cells, rate_answer, HEADERS};
use poolbench_model::{RatePoint, RateResult, RateVerdict};
use std::fmt::Write;

/// The whole rate search as one HTML page.
pub fn render_rate_html(r: &RateResult) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>poolbench find-rate · {}</title><style>{STYLE}</style></head><body>\n",
        esc(&r.target)
    );
    let _ = writeln!(
        h,
        "<h1>poolbench tune --find-rate · {}</h1><p class=\"muted\">poolbench {} · {} cores · {} · started {} · {} points in {:.0} s (budget {:.0} s), each held {:.0} s ({:.0} s to confirm)</p>",
        esc(&r.target),
        esc(&r.machine.poolbench_version),
        r.machine.cores,
        esc(&r.strategy),
        esc(&r.started_at),
        r.rate_points.len(),
        r.elapsed_s,
        r.budget_s,
        r.hold_s,
        r.confirm_hold_s
    );
    let class = if r.found.is_some() { "rec" } else { "norec" };
    let _ = writeln!(
        h,
        "<p class=\"{class}\" id=\"answer\"><b>{}</b></p>",
        esc(&rate_answer(r))
    );
    if !r.rate_points.is_empty() {
        h.push_str("<h2>The rate curve</h2><div class=\"charts\">");
        h.push_str(&chart(
            r,
            "completed req/s against the rate asked",
            |p| p.completed_rps,
            None,
        ));
        let slo = r.slo.p99_us.map(|b| b / 1000.0);
        h.push_str(&chart(
            r,
            "p99 (ms) against the rate asked",
            |p| p.p99_us / 1000.0,
            slo,
        ));
        h.push_str("</div>\n");
    }
    points(&mut h, r);
    if let Some(why) = &r.stopped_early {
        let _ = writeln!(
            h,
            "<p class=\"norec\">The search stopped early: {}</p>",
            esc(why)
        );
    }
    h.push_str("</body></html>\n");
    h
}

/// Every point, its verdict and why.
fn points(h: &mut String, r: &RateResult) {
    h.push_str("<h2>Every point</h2><table id=\"points\"><tr>");
    for c in HEADERS.iter().chain(["why"].iter()) {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for p in &r.rate_points {
        let class = if p.verdict.holds() {
            ""
        } else {
            " class=\"fail\""
        };
        let _ = write!(h, "<tr{class}>");
        for c in point_cells(p) {
            let _ = write!(h, "<td>{}</td>", esc(&c));
        }
        let _ = write!(
            h,
            "<td style=\"text-align:left\">{}</td></tr>",
            esc(p.why.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
}

fn colour(v: RateVerdict) -> &'static str {
    match v {
        RateVerdict::Holds => "#1a7f37",
        RateVerdict::NotSustained => "#bf8700",
        RateVerdict::GeneratorLimited => "#6e7781",
        _ => "#cf222e",
    }
}

/// One value per point against the rate asked (log scale), a dot per
/// point coloured by its verdict, and a dashed line at `line` (the SLO).
fn chart(
    r: &RateResult,
    title: &str,
    value: impl Fn(&RatePoint) -> f64,
    line: Option<f64>,
) -> String {
    let (w, hgt, left, bottom) = (500.0, 280.0, 60.0, 40.0);
    let rates = r.rate_points.iter().map(|p| p.rate_rps);
    let lo = rates.clone().fold(f64::MAX, f64::min).max(0.1);
    let hi = rates.fold(0.0, f64::max).max(lo * 1.01);
    let x = |v: f64| left + (v.max(lo) / lo).ln() / (hi / lo).ln() * (w - left - 20.0);
    let ymax = r
        .rate_points
        .iter()
        .map(&value)
        .chain(line)
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let y = |v: f64| hgt - bottom - v / ymax * (hgt - bottom - 30.0);
    let mut s = format!(
        "<svg class=\"chart\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" role=\"img\"><title>{t}</title><text x=\"{left}\" y=\"16\">{t}</text>\
         <line class=\"axis\" x1=\"{left}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{left}\" y1=\"30\" x2=\"{left}\" y2=\"{b}\"/>\
         <text x=\"4\" y=\"34\">{}</text><text x=\"4\" y=\"{b}\">0</text>\
         <text x=\"{left}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} req/s (log)</text>",
        w - 20.0,
        short(ymax),
        hgt - bottom + 16.0,
        short(lo),
        w - 20.0,
        hgt - bottom + 16.0,
        short(hi),
        t = esc(title),
        b = hgt - bottom,
    );
    if let Some(l) = line {
        let _ = write!(
            s,
            "<line class=\"slo\" x1=\"{left}\" y1=\"{yl:.1}\" x2=\"{}\" y2=\"{yl:.1}\" stroke=\"#cf222e\" stroke-dasharray=\"4 3\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#cf222e\">SLO</text>",
            w - 20.0,
            w - 20.0,
            y(l) - 3.0,
            yl = y(l)
        );
    }
    for p in &r.rate_points {
        let _ = write!(
            s,
            "<circle class=\"point\" data-verdict=\"{v}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{} req/s: {v}</title></circle>",
            x(p.rate_rps),
            y(value(p)),
            colour(p.verdict),
            short(p.rate_rps),
            v = p.verdict.name()
        );
    }
    s.push_str("</svg>");
    s
}
