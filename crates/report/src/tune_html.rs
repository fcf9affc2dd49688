//! `tune`'s HTML report: one self-contained page (inline CSS and SVG, no
//! script): the answer, how to set it, the capacity curve (throughput and
//! p99 against requests in flight, knee and cliff marked), every point.
use crate::charts::short;
use crate::format::{esc, fmt_duration_us, fmt_rate};
use crate::html::STYLE;
use crate::tune_text::tune_answer;
use poolbench_model::{TunePoint, TuneResult};
use poolbench_tune::capacity_points;
use std::fmt::Write;

/// The whole tune result as one HTML page.
pub fn render_tune_html(r: &TuneResult) -> String {
    let mut h = String::new();
    head(&mut h, r);
    let class = if r.recommendation.is_some() {
        "rec"
    } else {
        "norec"
    };
    let _ = writeln!(
        h,
        "<p class=\"{class}\" id=\"answer\"><b>{}</b></p>",
        esc(&tune_answer(r))
    );
    answer_sections(&mut h, r);
    h.push_str(&crate::fleet::fleet_html(r));
    crate::tune_fleet::html(&mut h, r);
    capacity_charts(&mut h, r);
    points_table(&mut h, r);
    findings(&mut h, r);
    if let Some(why) = &r.stopped_early {
        let _ = writeln!(
            h,
            "<p class=\"norec\">The search stopped early: {}</p>",
            esc(why)
        );
    }
    if let Some(line) = crate::tune_text::threads_line(r) {
        let _ = writeln!(h, "<p>{}</p>", esc(&line));
    }
    h.push_str("</body></html>\n");
    h
}

/// The page's head and title line: target, machine, points and time.
fn head(h: &mut String, r: &TuneResult) {
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>poolbench tune · {}</title><style>{STYLE}</style></head><body>\n",
        esc(&r.target)
    );
    let _ = writeln!(
        h,
        "<h1>poolbench tune · {}</h1><p class=\"muted\">poolbench {} · {} cores · started {} · {} points in {:.0} s (budget {:.0} s)</p>",
        esc(&r.target),
        esc(&r.machine.poolbench_version),
        r.machine.cores,
        esc(&r.started_at),
        r.points.len(),
        r.elapsed_s,
        r.budget_s
    );
}

/// The capacity curves (throughput and p99), where there are capacity levels.
fn capacity_charts(h: &mut String, r: &TuneResult) {
    let levels = capacity_points(&r.points);
    if levels.is_empty() {
        return;
    }
    h.push_str("<h2>The service's capacity</h2><div class=\"charts\">");
    h.push_str(&curve(
        r,
        &levels,
        "throughput (req/s) against requests in flight",
        |p| p.throughput_rps,
    ));
    h.push_str(&curve(
        r,
        &levels,
        "p99 (ms) against requests in flight",
        |p| p.p99_us / 1000.0,
    ));
    h.push_str("</div>\n");
}

/// Each finding with its evidence.
fn findings(h: &mut String, r: &TuneResult) {
    for f in &r.findings {
        let _ = write!(
            h,
            "<p class=\"finding\">{}: {}</p><ul>",
            esc(f.id.as_str()),
            esc(&f.title)
        );
        for e in &f.evidence {
            let _ = write!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul>");
    }
}

/// How to set the answer, and what the search saw.
fn answer_sections(h: &mut String, r: &TuneResult) {
    if let Some(p) = &r.recommendation {
        h.push_str(
            "<h2>How to set it</h2><table id=\"settings\"><tr><th>client</th><th>setting</th></tr>",
        );
        for s in &p.client_settings {
            let _ = write!(
                h,
                "<tr><td>{}</td><td style=\"text-align:left\"><code>{}</code></td></tr>",
                esc(&s.client),
                esc(&s.setting)
            );
        }
        h.push_str("</table>\n");
    }
    if !r.inferences.is_empty() {
        h.push_str("<h2>What the search saw</h2><ul>");
        for i in &r.inferences {
            let _ = write!(h, "<li><b>{}</b>: {}</li>", esc(&i.text), esc(&i.evidence));
        }
        h.push_str("</ul>\n");
    }
}

/// One value against requests in flight (log scale), knee and cliff as
/// vertical marks.
fn curve(
    r: &TuneResult,
    levels: &[&TunePoint],
    title: &str,
    value: impl Fn(&TunePoint) -> f64,
) -> String {
    let (w, hgt, left, bottom) = (500.0, 280.0, 60.0, 40.0);
    let hi = levels.last().map_or(1.0, |p| p.in_flight as f64).max(2.0);
    let x = |n: f64| left + n.max(1.0).ln() / hi.ln() * (w - left - 20.0);
    let ymax = levels
        .iter()
        .map(|p| value(p))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let y = |v: f64| hgt - bottom - v / ymax * (hgt - bottom - 30.0);
    let mut s = format!("<svg class=\"chart\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" role=\"img\"><title>{}</title>", esc(title));
    let _ = write!(s, "<text x=\"{left}\" y=\"16\">{}</text>", esc(title));
    let _ = write!(s, "<line class=\"axis\" x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\"/><line class=\"axis\" x1=\"{left}\" y1=\"30\" x2=\"{left}\" y2=\"{0}\"/>", hgt - bottom, w - 20.0);
    let _ = write!(
        s,
        "<text x=\"4\" y=\"34\">{}</text><text x=\"4\" y=\"{}\">0</text>",
        short(ymax / 1.1),
        hgt - bottom
    );
    level_labels(&mut s, levels, x, hgt - bottom);
    knee_and_cliff(&mut s, r, x, hgt - bottom);
    value_line(&mut s, levels, |p| (x(p.in_flight as f64), y(value(p))));
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">requests in flight</text></svg>",
        (w + left) / 2.0,
        hgt - 6.0
    );
    s
}

/// The levels under the x axis (at `base`), none closer than 22 px to the one before.
fn level_labels(s: &mut String, levels: &[&TunePoint], x: impl Fn(f64) -> f64, base: f64) {
    let mut last = f64::NEG_INFINITY;
    for p in levels {
        let xp = x(p.in_flight as f64);
        if xp - last < 22.0 {
            continue;
        }
        last = xp;
        let _ = write!(
            s,
            "<text x=\"{xp:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            base + 16.0,
            p.in_flight
        );
    }
}

/// The knee (unless still rising) and the cliff, as dashed vertical marks.
fn knee_and_cliff(s: &mut String, r: &TuneResult, x: impl Fn(f64) -> f64, base: f64) {
    let c = &r.capacity;
    for (at, label, colour) in [
        (
            c.knee_in_flight.filter(|_| !c.still_rising),
            "knee",
            "#1a7f37",
        ),
        (c.cliff_in_flight, "cliff", "#cf222e"),
    ] {
        if let Some(n) = at {
            let xn = x(n as f64);
            let _ = write!(s, "<line x1=\"{xn:.1}\" y1=\"30\" x2=\"{xn:.1}\" y2=\"{}\" stroke=\"{colour}\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"28\" fill=\"{colour}\">{label} {n}</text>", base, xn + 3.0);
        }
    }
}

/// The levels' values as a line with a dot on each (`at`: a point's place).
fn value_line(s: &mut String, levels: &[&TunePoint], at: impl Fn(&TunePoint) -> (f64, f64)) {
    let pts: Vec<String> = levels
        .iter()
        .map(|p| {
            let (x, y) = at(p);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"2\" points=\"{}\"/>",
        pts.join(" ")
    );
    for p in levels {
        let (x, y) = at(p);
        let _ = write!(
            s,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"#0969da\"/>"
        );
    }
}

fn points_table(h: &mut String, r: &TuneResult) {
    h.push_str("<h2>Every point</h2><table id=\"points\"><tr><th>phase</th><th>strategy</th><th>in flight</th><th>req/s</th><th>±95%</th><th>p99</th><th>errors</th><th>runs</th></tr>");
    for p in &r.points {
        let ci = p.throughput_ci95.map_or(String::new(), fmt_rate);
        let _ = write!(
            h,
            "<tr><td>{:?}</td><td>{}</td><td>{}</td><td>{}</td><td>{ci}</td><td>{}</td><td>{:.1}%</td><td>{}</td></tr>",
            p.phase,
            esc(&p.strategy),
            p.in_flight,
            fmt_rate(p.throughput_rps),
            fmt_duration_us(p.p99_us),
            p.error_rate * 100.0,
            p.runs
        );
    }
    h.push_str("</table>\n");
}
