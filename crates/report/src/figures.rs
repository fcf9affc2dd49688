//! Two results compared as a list of figures: each has the name
//! `--fail-if` knows it by, its reading before and after with an
//! interval, the change, and whether the change is beyond the noise.
//! `tune_compare.rs` gives a tune's figures; another kind of result gives
//! its own rows to the same list, and the checks, the renderers and the
//! JUnit cases take them as they are.
use crate::bounds::{Bound, BoundCheck};
use crate::compare::welch_from;
use crate::format::{fmt_duration_us, fmt_rate};
use serde::Serialize;

/// One side's value of a figure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Reading {
    pub value: f64,
    /// Half-width of the value's interval: a 95% confidence interval, or
    /// for a count the search found, its resolution ([`resolution`]).
    /// `None`: no interval.
    pub half_width: Option<f64>,
    /// Nothing was found up to `value`, so the figure is at least that
    /// (no cliff up to 64 in flight; a peak still rising).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
}

impl Reading {
    pub fn exact(value: f64, half_width: Option<f64>) -> Reading {
        Reading {
            value,
            half_width,
            at_least: false,
        }
    }

    /// A count found by a search: its resolution as its interval.
    pub fn count(n: usize) -> Reading {
        Reading::exact(n as f64, Some(resolution(n as f64)))
    }
}

/// What the change is when one side was a lower bound: the change
/// computed from the bound is then itself a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeIs {
    Exact,
    /// The before side was "at least": the true change is lower.
    AtMost,
    /// The after side was "at least": the true change is higher.
    AtLeast,
}

/// What a figure is: the same for both sides.
#[derive(Clone, Copy, Debug)]
pub struct FigureKind {
    /// Its `--fail-if` name (`crate::bounds::BOUNDABLE` lists them).
    pub name: &'static str,
    /// In words: `peak throughput`.
    pub title: &'static str,
    /// `req/s`, `µs`, `in flight`, `connections`.
    pub unit: &'static str,
    /// What its interval is, for the words: `the 95% half-widths`.
    pub spread: &'static str,
    /// A change of this many percent or less is never significant, for
    /// the reason `floor_why` gives (0: the interval alone decides).
    pub floor_pct: f64,
    pub floor_why: &'static str,
}

/// One compared figure.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Figure {
    /// The name `--fail-if` knows it by (`peak`, `knee` …).
    pub name: String,
    pub title: String,
    pub unit: String,
    /// `None`: the result has no such figure (no pool recommended, no
    /// plateau to read "serves at once" from).
    pub before: Option<Reading>,
    pub after: Option<Reading>,
    /// (after − before) ÷ before, percent; `None` when a side is missing
    /// or both are lower bounds.
    pub change_pct: Option<f64>,
    pub change_is: ChangeIs,
    /// Beyond the noise (`None`: cannot tell, and no bound fails on it).
    pub significant: Option<bool>,
    /// The rule's reading, in words.
    pub basis: String,
}

/// The resolution of a count the search narrowed: it bisects until two
/// levels are within 10% or 1 of each other (`poolbench_tune::close_enough`),
/// so a count is known to max(1, 10%).
pub fn resolution(n: f64) -> f64 {
    (0.1 * n).max(1.0)
}

/// `v` as people read it in `unit`.
pub(crate) fn number(unit: &str, v: f64) -> String {
    match unit {
        "req/s" => fmt_rate(v),
        "µs" => fmt_duration_us(v),
        _ if (v - v.round()).abs() < 1e-9 => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// A reading as the tables show it: `1,200 ±12`, `≥ 64`.
pub(crate) fn shown(unit: &str, r: Option<Reading>) -> String {
    match r {
        None => "–".to_string(),
        Some(r) if r.at_least => format!("≥ {}", number(unit, r.value)),
        Some(Reading {
            value,
            half_width: Some(h),
            ..
        }) => format!("{} ±{}", number(unit, value), number(unit, h)),
        Some(r) => number(unit, r.value),
    }
}

impl Figure {
    /// Judged by the readings' intervals: significant when the values lie
    /// further apart than their half-widths added (a 95% interval each
    /// side, or a count's resolution each side). Where a side is a lower
    /// bound, only a change away from it can be told.
    pub fn judged(kind: &FigureKind, before: Option<Reading>, after: Option<Reading>) -> Figure {
        let (change_pct, change_is) = change(before, after);
        let n = |r: Reading| number(kind.unit, r.value);
        let (significant, basis) = match (before, after, change_pct) {
            (Some(b), Some(a), Some(pct)) => by_intervals(kind, (b, a), (pct, change_is)),
            (Some(b), Some(a), None) if b.at_least && a.at_least => (
                None,
                format!("none found up to {} before, {} after", n(b), n(a)),
            ),
            (Some(_), Some(_), None) => (None, "zero before: no change to measure".into()),
            (None, None, _) => (None, "in neither result".to_string()),
            (None, _, _) => (None, "not in the before result".to_string()),
            (_, None, _) => (None, "not in the after result".to_string()),
        };
        Figure {
            name: kind.name.to_string(),
            title: kind.title.to_string(),
            unit: kind.unit.to_string(),
            before,
            after,
            change_pct,
            change_is,
            significant,
            basis,
        }
    }

    /// Judged by repetitions: Welch's t-test at 95% on each side's
    /// readings of the figure (at least 2 a side; `None` with fewer).
    pub fn judged_by_readings(
        kind: &FigureKind,
        (before, after): (Option<Reading>, Option<Reading>),
        (xs, ys): (&[f64], &[f64]),
    ) -> Figure {
        let mut f = Figure::judged(kind, before, after);
        if f.change_pct.is_none() {
            return f;
        }
        f.significant = welch_from(xs, ys, 2);
        f.basis = match f.significant {
            None => format!(
                "{} and {} readings: 2 a side are needed to tell",
                xs.len(),
                ys.len()
            ),
            Some(s) => format!(
                "Welch's t-test at 95% on {} and {} readings: {}",
                xs.len(),
                ys.len(),
                if s { "a shift" } else { "within the noise" }
            ),
        };
        f
    }

    /// The change as words: `-25.0%`, `at most -50.0%`, `–`.
    pub fn change_text(&self) -> String {
        let Some(pct) = self.change_pct else {
            return "–".to_string();
        };
        match self.change_is {
            ChangeIs::Exact => format!("{pct:+.1}%"),
            ChangeIs::AtMost => format!("at most {pct:+.1}%"),
            ChangeIs::AtLeast => format!("at least {pct:+.1}%"),
        }
    }

    /// Both readings with the unit: `24 ±2.4 → 18 ±1.8 in flight`,
    /// `41.0 ms → 54.0 ms`.
    pub fn values(&self) -> String {
        let unit = match self.unit.as_str() {
            // Durations carry their own unit.
            "µs" => String::new(),
            u => format!(" {u}"),
        };
        format!(
            "{} → {}{unit}",
            shown(&self.unit, self.before),
            shown(&self.unit, self.after)
        )
    }

    /// The title with its unit: `peak throughput (req/s)`; durations
    /// say their own unit.
    pub fn label(&self) -> String {
        match self.unit.as_str() {
            "µs" => self.title.clone(),
            u => format!("{} ({u})", self.title),
        }
    }

    /// `significant`, `not significant`, `cannot tell`.
    pub fn verdict(&self) -> &'static str {
        match self.significant {
            Some(true) => "significant",
            Some(false) => "not significant",
            None => "cannot tell",
        }
    }
}

fn change(before: Option<Reading>, after: Option<Reading>) -> (Option<f64>, ChangeIs) {
    let (Some(b), Some(a)) = (before, after) else {
        return (None, ChangeIs::Exact);
    };
    if (b.at_least && a.at_least) || b.value <= 0.0 {
        return (None, ChangeIs::Exact);
    }
    let is = match (b.at_least, a.at_least) {
        (true, _) => ChangeIs::AtMost,
        (_, true) => ChangeIs::AtLeast,
        _ => ChangeIs::Exact,
    };
    (Some((a.value - b.value) / b.value * 100.0), is)
}

fn by_intervals(
    kind: &FigureKind,
    (b, a): (Reading, Reading),
    (pct, is): (f64, ChangeIs),
) -> (Option<bool>, String) {
    let (Some(hb), Some(ha)) = (b.half_width, a.half_width) else {
        return (None, "no interval on a side".to_string());
    };
    let n = |v: f64| number(kind.unit, v);
    let apart = (a.value - b.value).abs();
    let sum = format!("{} + {} ({})", n(hb), n(ha), kind.spread);
    // A lower bound on one side tells the change only away from it.
    let away = match is {
        ChangeIs::Exact => true,
        ChangeIs::AtMost => a.value < b.value,
        ChangeIs::AtLeast => a.value > b.value,
    };
    let beyond = apart > hb + ha;
    let small = pct.abs() <= kind.floor_pct;
    match (beyond && !small, away, is) {
        (true, true, _) => (Some(true), format!("{} apart, more than {sum}", n(apart))),
        (false, _, ChangeIs::Exact) if beyond => (
            Some(false),
            format!(
                "{} apart, more than {sum} but within {}%: {}",
                n(apart),
                (kind.floor_pct * 100.0).round() / 100.0,
                kind.floor_why
            ),
        ),
        (false, _, ChangeIs::Exact) => (Some(false), format!("{} apart, within {sum}", n(apart))),
        _ => (
            None,
            format!(
                "{} apart, a side a lower bound: the change cannot be told",
                n(apart)
            ),
        ),
    }
}

/// Two results of one kind compared figure by figure.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FigureComparison {
    /// The kind of both results: `tune`.
    pub kind: String,
    /// Their targets.
    pub base: String,
    pub new: String,
    /// What changed, in words: the answer first, then one sentence per
    /// other significant change.
    pub summary: Vec<String>,
    /// Why the two may not be like for like (another load, an SLO).
    pub notes: Vec<String>,
    pub figures: Vec<Figure>,
}

/// Every bound against its figure, crossed or not: crossed only by a
/// significant change beyond it (a change that is a bound counts toward
/// the side it is known on).
pub fn figure_checks(c: &FigureComparison, bounds: &[Bound]) -> Vec<BoundCheck> {
    bounds
        .iter()
        .map(|b| match c.figures.iter().find(|f| f.name == b.metric) {
            Some(f) => check(f, b),
            None => BoundCheck {
                cell: b.metric.clone(),
                bound: b.written(),
                measured: format!("{}: not in a {} comparison", b.metric, c.kind),
                crossed: false,
                line: String::new(),
            },
        })
        .collect()
}

fn check(f: &Figure, b: &Bound) -> BoundCheck {
    let known_side = match f.change_is {
        ChangeIs::Exact => true,
        ChangeIs::AtMost => b.below,
        ChangeIs::AtLeast => !b.below,
    };
    let beyond = f.change_pct.is_some_and(|pct| b.beyond(pct)) && known_side;
    let values = f.values();
    BoundCheck {
        cell: f.name.clone(),
        bound: b.written(),
        measured: format!("{} {} ({}; {values})", f.name, f.change_text(), f.verdict()),
        crossed: beyond && f.significant == Some(true),
        line: format!(
            "{} {} ({values}; bound {})",
            f.name,
            f.change_text(),
            b.written()
        ),
    }
}

/// The figures whose significant change crosses a bound, with why.
pub fn figure_violations(c: &FigureComparison, bounds: &[Bound]) -> Vec<String> {
    figure_checks(c, bounds)
        .into_iter()
        .filter(|x| x.crossed)
        .map(|x| x.line)
        .collect()
}

/// The JSON Schema of a [`FigureComparison`] (`poolbench schema
/// figure-comparison`: what `compare --format json` prints for two tunes).
pub fn figure_comparison_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(FigureComparison)).expect("a schema serializes");
    schema["title"] = "poolbench comparison of figures".into();
    schema
}
