//! `tune --find-rate` as text, Markdown and JUnit: the answer first, in
//! words, then every point with its verdict.
use crate::format::{fmt_duration_us, fmt_rate};
use crate::junit::{started, JunitCase, JunitSuite};
use poolbench_model::{RatePhase, RatePoint, RateResult};
use poolbench_tune::rate::slo_words;
use std::fmt::Write;

/// The answer in one paragraph: the rate held, or why none.
pub fn rate_answer(r: &RateResult) -> String {
    match (&r.found, &r.reason) {
        (Some(f), _) => format!("The service {}.", f.summary),
        (None, Some(why)) => format!("No rate found: {why}."),
        (None, None) => "No rate found.".into(),
    }
}

pub(crate) fn phase_name(p: RatePhase) -> &'static str {
    match p {
        RatePhase::Bracket => "bracket",
        RatePhase::Bisect => "bisect",
        RatePhase::Confirm => "confirm",
    }
}

/// The columns of a point, as text.
pub(crate) fn point_cells(p: &RatePoint) -> [String; 9] {
    [
        phase_name(p.phase).to_string(),
        fmt_rate(p.rate_rps),
        fmt_rate(p.completed_rps),
        fmt_duration_us(p.p99_us),
        format!("{:+.0}", p.backlog_growth_rps),
        format!(
            "{} → {}",
            fmt_duration_us(p.early_p99_us),
            fmt_duration_us(p.late_p99_us)
        ),
        format!("{:.2}%", 100.0 * p.errors as f64 / p.requests.max(1) as f64),
        p.connections.to_string(),
        p.verdict.name().to_string(),
    ]
}

pub(crate) const HEADERS: [&str; 9] = [
    "phase",
    "rate req/s",
    "done/s",
    "p99",
    "backlog req/s",
    "p99 early → late",
    "errors",
    "connections",
    "verdict",
];

fn heading(r: &RateResult) -> String {
    format!(
        "poolbench tune --find-rate · {} · {} · SLO {} · {} points in {:.0} s (budget {:.0} s), each held {:.0} s ({:.0} s to confirm)",
        r.target,
        r.strategy,
        slo_words(&r.slo),
        r.rate_points.len(),
        r.elapsed_s,
        r.budget_s,
        r.hold_s,
        r.confirm_hold_s
    )
}

/// The whole search as text.
pub fn render_rate_text(r: &RateResult) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{}\n", rate_answer(r));
    let _ = writeln!(t, "{}\n", heading(r));
    let widths = [8, 11, 10, 10, 14, 22, 8, 12, 18];
    let row = |cells: &[String]| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end()
            .to_string()
    };
    let _ = writeln!(t, "{}", row(&HEADERS.map(String::from)));
    for p in &r.rate_points {
        let _ = writeln!(t, "{}", row(&point_cells(p)));
        if let Some(why) = &p.why {
            let _ = writeln!(t, "{:9}{why}", "");
        }
    }
    tail(&mut t, r);
    t
}

/// What the search could not do, and the findings, after the points.
fn tail(t: &mut String, r: &RateResult) {
    if let Some(why) = &r.stopped_early {
        let _ = writeln!(t, "\nThe search stopped early: {why}");
    }
    for f in &r.findings {
        let _ = writeln!(t, "\n[{}] {}", f.id, f.title);
    }
}

/// The whole search as Markdown.
pub fn render_rate_markdown(r: &RateResult) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# {}\n\n**{}**\n", heading(r), rate_answer(r));
    let _ = writeln!(t, "| {} | why |", HEADERS.join(" | "));
    let _ = writeln!(t, "|{}---|", "---|".repeat(HEADERS.len()));
    for p in &r.rate_points {
        let _ = writeln!(
            t,
            "| {} | {} |",
            point_cells(p).join(" | "),
            p.why.as_deref().unwrap_or("").replace('|', "\\|")
        );
    }
    tail(&mut t, r);
    t
}

/// The search as one JUnit case: it passes when a rate held.
pub fn rate_junit(r: &RateResult) -> Vec<JunitSuite> {
    let measured = match &r.found {
        Some(f) => format!("{} req/s held", fmt_rate(f.rate_rps)),
        None => "no rate held".into(),
    };
    vec![JunitSuite {
        name: format!("poolbench tune --find-rate {}", r.target),
        started: started(&r.started_at),
        cases: vec![JunitCase {
            class: "find-rate".into(),
            name: format!("a rate holds {}", slo_words(&r.slo)),
            measured,
            failure: r
                .found
                .is_none()
                .then(|| r.reason.clone().unwrap_or_else(|| "no answer".into())),
            seconds: r.elapsed_s,
        }],
    }]
}
