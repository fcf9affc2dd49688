//! Two saved find-rates compared, as a CI capacity gate: the rate held
//! (its interval: from the answer to the rate that failed above it), the
//! throughput at it (its 95% interval over the answer's repetitions) and
//! its p99 (judged by its holds), each with a verdict, and the change in
//! words ("this build holds 25% less: …").
use crate::figures::{Figure, FigureComparison, FigureKind, Reading};
use crate::format::fmt_rate;
use poolbench_model::{RatePoint, RateResult};
use poolbench_tune::rate::slo_words;

/// A rate search's answer lies within 3% and two searches on a shared
/// machine a few minutes apart differ by more than that: a change of 5%
/// or less is no change to the gate.
const TIE_PCT: f64 = 5.0;
const TIE_WHY: &str = "two searches minutes apart on one machine differ that much";

pub(crate) const RATE: FigureKind = FigureKind {
    name: "rate",
    title: "rate held within the SLO",
    unit: "req/s",
    spread: "the gap to the rate that failed above it",
    floor_pct: TIE_PCT,
    floor_why: TIE_WHY,
};
const THROUGHPUT: FigureKind = FigureKind {
    name: "throughput",
    title: "completions at the rate held",
    unit: "req/s",
    spread: "the 95% half-widths of its repetitions",
    floor_pct: TIE_PCT,
    floor_why: TIE_WHY,
};
const P99: FigureKind = FigureKind {
    name: "p99",
    title: "p99 at the rate held",
    unit: "µs",
    spread: "its holds",
    floor_pct: 0.0,
    floor_why: "",
};

/// The holds of the answer's rate.
fn holds_at(r: &RateResult) -> Vec<&RatePoint> {
    let rate = r.found.as_ref().map(|f| f.rate_rps);
    r.rate_points
        .iter()
        .filter(|p| Some(p.rate_rps) == rate)
        .collect()
}

/// A find-rate's rows of the figure list.
pub fn rate_figures(b: &RateResult, a: &RateResult) -> Vec<Figure> {
    // The answer lies between the rate held and the one that failed: half
    // that gap either side of its middle would move the value; the gap
    // itself, as a half-width on the rate held, is the honest spread.
    let rate = |r: &RateResult| {
        let f = r.found.as_ref()?;
        Some(Reading {
            value: f.rate_rps,
            half_width: f.fails_at_rps.map(|hi| hi - f.rate_rps),
            at_least: f.fails_at_rps.is_none(),
        })
    };
    let done = |r: &RateResult| {
        let f = r.found.as_ref()?;
        Some(Reading::exact(f.completed_rps, f.completed_ci95))
    };
    let p99 = |r: &RateResult| Some(Reading::exact(r.found.as_ref()?.p99_us, None));
    let p99s = |r: &RateResult| holds_at(r).iter().map(|p| p.p99_us).collect::<Vec<_>>();
    vec![
        Figure::judged(&RATE, rate(b), rate(a)),
        Figure::judged(&THROUGHPUT, done(b), done(a)),
        Figure::judged_by_readings(&P99, (p99(b), p99(a)), (&p99s(b), &p99s(a))),
    ]
}

/// `before` against `after`: the figures, and what they mean.
pub fn compare_rates(before: &RateResult, after: &RateResult) -> FigureComparison {
    let figures = rate_figures(before, after);
    FigureComparison {
        kind: "rate".to_string(),
        base: before.target.clone(),
        new: after.target.clone(),
        summary: summary(before, after, &figures),
        notes: notes(before, after),
        figures,
    }
}

/// The answer in words, then the p99 if it moved.
fn summary(b: &RateResult, a: &RateResult, f: &[Figure]) -> Vec<String> {
    let slo = slo_words(&a.slo);
    let head = match (&b.found, &a.found, f[0].change_pct, f[0].significant) {
        (Some(x), Some(y), Some(pct), Some(true)) => format!(
            "this build holds {:.0}% {}: {} req/s within {slo}, against {} before{}",
            pct.abs(),
            if pct < 0.0 { "less" } else { "more" },
            fmt_rate(y.rate_rps),
            fmt_rate(x.rate_rps),
            y.fails_why
                .as_ref()
                .map_or(String::new(), |w| format!("; above it, {w}"))
        ),
        (Some(x), Some(y), _, _) => format!(
            "this build holds as much: {} req/s within {slo}, against {} before ({})",
            fmt_rate(y.rate_rps),
            fmt_rate(x.rate_rps),
            f[0].basis
        ),
        (Some(x), None, _, _) => format!(
            "this build holds no rate within {slo} (before: {} req/s): {}",
            fmt_rate(x.rate_rps),
            a.reason.as_deref().unwrap_or("no reason given")
        ),
        (None, Some(y), _, _) => format!(
            "this build holds {} req/s within {slo}; before, none held",
            fmt_rate(y.rate_rps)
        ),
        (None, None, _, _) => format!("neither build holds a rate within {slo}"),
    };
    let mut out = vec![head];
    if let (Some(pct), Some(true)) = (f[2].change_pct, f[2].significant) {
        out.push(format!(
            "the p99 at the rate held moved {pct:+.0}% ({})",
            f[2].values()
        ));
    }
    out
}

/// What keeps the two from being like for like.
fn notes(b: &RateResult, a: &RateResult) -> Vec<String> {
    let mut out = Vec::new();
    if b.slo != a.slo {
        out.push(format!(
            "the searches held different SLOs ({} before, {} after): not like for like",
            slo_words(&b.slo),
            slo_words(&a.slo)
        ));
    }
    if b.strategy != a.strategy {
        out.push(format!(
            "the searches ran different strategies ({} before, {} after)",
            b.strategy, a.strategy
        ));
    }
    for (r, when) in [(b, "before"), (a, "after")] {
        if let Some(why) = &r.stopped_early {
            out.push(format!("the search {when} stopped early: {why}"));
        }
    }
    out
}
