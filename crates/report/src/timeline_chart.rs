//! A cell's timeline as an SVG chart: successes and errors per bucket as
//! bars, requests in flight (and connections open, with `--ramp`) as
//! lines, stalls and outages shaded.
use poolbench_model::{CellResult, Timeline};
use std::fmt::Write;

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 120.0;

/// Successes and errors per bucket as bars, in flight as a line; stalls
/// shaded.
pub(crate) fn timeline(c: &CellResult) -> String {
    let t = &c.timeline;
    let n = t.ok.len().max(1);
    let (w, hgt) = (WIDTH, HEIGHT);
    let bw = w / n as f64;
    let mut s = format!(
        "<svg class=\"chart timeline\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-buckets=\"{}\">",
        t.ok.len()
    );
    shade(&mut s, c, bw);
    bars(&mut s, t, bw);
    let inflight_top = t.inflight.iter().copied().max().unwrap_or(0).max(1) as f64;
    let points = line(&t.inflight, inflight_top, bw);
    if !t.open.is_empty() {
        let top = t.open.iter().copied().max().unwrap_or(0).max(1) as f64;
        let open = line(&t.open, top, bw);
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"#8250df\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\" points=\"{}\"><title>connections open (most {top})</title></polyline>",
            open.join(" ")
        );
    }
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\" points=\"{}\"><title>in flight</title></polyline>\
         <text x=\"4\" y=\"12\">per {} ms: successes (green), errors (red), in flight (blue line); stalls shaded amber, outages red</text></svg>",
        points.join(" "),
        t.bucket_ms
    );
    s
}

/// Stalls shaded amber, outages red.
fn shade(s: &mut String, c: &CellResult, bw: f64) {
    let t = &c.timeline;
    let hgt = HEIGHT;
    let bucket_s = t.bucket_ms as f64 / 1000.0;
    for st in &c.stalls {
        let from = (st.start_s / bucket_s + t.measure_from_bucket as f64) * bw;
        let _ = write!(
            s,
            "<rect x=\"{from:.1}\" y=\"0\" width=\"{:.1}\" height=\"{hgt}\" fill=\"#bf8700\" opacity=\"0.2\"><title>stall</title></rect>",
            st.duration_s / bucket_s * bw
        );
    }
    for o in poolbench_analysis::outages(c) {
        let from = (o.from_s / bucket_s + t.measure_from_bucket as f64) * bw;
        let _ = write!(
            s,
            "<rect class=\"outage\" x=\"{from:.1}\" y=\"0\" width=\"{:.1}\" height=\"{hgt}\" fill=\"#cf222e\" opacity=\"0.15\"><title>outage: {} attempts failed</title></rect>",
            (o.to_s - o.from_s) / bucket_s * bw,
            o.failed
        );
    }
}

/// Successes (green) and errors (red) per bucket, stacked.
fn bars(s: &mut String, t: &Timeline, bw: f64) {
    let hgt = HEIGHT;
    let top =
        t.ok.iter()
            .zip(&t.errors)
            .map(|(a, b)| a + b)
            .max()
            .unwrap_or(0)
            .max(1) as f64;
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
}

/// A value per bucket as a line's points, scaled to its own top.
fn line(v: &[u32], top: f64, bw: f64) -> Vec<String> {
    v.iter()
        .enumerate()
        .map(|(i, &n)| {
            format!(
                "{:.1},{:.1}",
                (i as f64 + 0.5) * bw,
                HEIGHT - n as f64 / top * (HEIGHT - 10.0)
            )
        })
        .collect()
}
