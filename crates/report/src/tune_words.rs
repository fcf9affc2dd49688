//! Two tunes' change in words: the answer first ("this build serves 25%
//! less at the same pool: the service now serves about 18 at a time, so
//! a pool of 24 queues; set 18"), then each other significant change,
//! and what keeps the two from being like for like.
use crate::figures::{number, ChangeIs, Figure, FigureKind, Reading};
use crate::format::fmt_rate;
use crate::tune_figures::THROUGHPUT;
use poolbench_model::{TuneLoad, TunePhase, TuneResult};

fn figure<'a>(f: &'a [Figure], name: &str) -> Option<&'a Figure> {
    f.iter().find(|x| x.name == name)
}

/// A side's value, where it is one (not a lower bound).
fn value(f: &Figure, after: bool) -> Option<f64> {
    let r = if after { f.after } else { f.before };
    r.filter(|r| !r.at_least).map(|r| r.value)
}

/// The answer, then one sentence per other significant change.
pub(crate) fn summary(b: &TuneResult, a: &TuneResult, f: &[Figure]) -> Vec<String> {
    let (head, said) = headline(b, a, f);
    let mut out = vec![match advice(f) {
        Some(advice) => format!("{head}: {advice}"),
        None => head,
    }];
    for name in ["peak", "knee", "cliff", "throughput", "p99"] {
        if Some(name) != said {
            out.extend(figure(f, name).and_then(moved));
        }
    }
    match (&b.recommendation, &a.recommendation) {
        (Some(_), None) => out.push(format!(
            "no pool is recommended now: {}",
            a.reason.as_deref().unwrap_or("no reason given")
        )),
        (None, Some(p)) => out.push(format!(
            "a pool is recommended now ({}); before: {}",
            p.spec,
            b.reason.as_deref().unwrap_or("none")
        )),
        _ => {}
    }
    out
}

/// How much the build serves: at the pool the before tune picked, where
/// the after tune measured it too; else at each tune's pick, where that
/// can be judged; else at the peak. Names the figure it said.
fn headline(b: &TuneResult, a: &TuneResult, f: &[Figure]) -> (String, Option<&'static str>) {
    if let Some((spec, same)) = same_pool(b, a) {
        let values = format!("{spec}: {}", same.values());
        return (serves_text(&same, "at the same pool", &values), None);
    }
    let picked = figure(f, "throughput").filter(|t| t.significant.is_some());
    if let (Some(t), Some(pb), Some(pa)) = (picked, &b.recommendation, &a.recommendation) {
        let specs = match pb.spec == pa.spec {
            true => pb.spec.clone(),
            false => format!("{} → {}", pb.spec, pa.spec),
        };
        let values = format!("{specs}: {}", t.values());
        return (serves_text(t, "at its pick", &values), Some("throughput"));
    }
    match figure(f, "peak").filter(|p| p.change_pct.is_some()) {
        Some(peak) => (
            serves_text(peak, "at its peak", &peak.values()),
            Some("peak"),
        ),
        None => ("no throughput to compare".to_string(), None),
    }
}

fn serves_text(x: &Figure, at: &str, values: &str) -> String {
    let pct = x.change_pct.unwrap_or(0.0);
    let more = if pct < 0.0 { "less" } else { "more" };
    let bound = match x.change_is {
        ChangeIs::Exact => "",
        _ => "at least ",
    };
    match x.significant {
        Some(true) => format!(
            "this build serves {bound}{:.0}% {more} {at} ({values})",
            pct.abs()
        ),
        Some(false) => format!("this build serves as much {at} ({values}, within {CI95})"),
        None => format!(
            "how much this build serves {at} cannot be told ({values}; {})",
            x.basis
        ),
    }
}

const CI95: &str = "the 95% intervals";

/// The before pick's throughput against the after tune's own points at
/// the same strategy and size.
fn same_pool(b: &TuneResult, a: &TuneResult) -> Option<(String, Figure)> {
    let p = b.recommendation.as_ref()?;
    let there = a.points.iter().rev().find(|x| {
        matches!(x.phase, TunePhase::Pool | TunePhase::Confirm)
            && x.strategy == p.spec
            && x.requests > 0
    })?;
    let kind = FigureKind {
        name: "same-pool",
        title: "throughput at the same pool",
        unit: "req/s",
        spread: "the 95% half-widths",
        ..THROUGHPUT
    };
    let same = Figure::judged(
        &kind,
        Some(Reading::exact(p.throughput_rps, p.throughput_ci95)),
        Some(Reading::exact(there.throughput_rps, there.throughput_ci95)),
    );
    Some((p.spec.clone(), same))
}

/// What to set, when the service's own figure or the pick moved beyond
/// the search's resolution; what to keep when neither did.
fn advice(f: &[Figure]) -> Option<String> {
    let pick = figure(f, "pick")?;
    let serves = figure(f, "serves");
    let (pb, pa) = (value(pick, false), value(pick, true));
    let set = pa.map_or(String::new(), |n| format!("; set {n:.0}"));
    if let Some(s) = serves.filter(|s| s.significant == Some(true)) {
        let (sb, sa) = (value(s, false)?, value(s, true)?);
        let pool = match pb {
            Some(p) if p > sa => format!(", so a pool of {p:.0} queues"),
            Some(p) if p < sa => format!(", so a pool of {p:.0} leaves capacity unused"),
            _ => String::new(),
        };
        return Some(format!(
            "the service now serves about {sa:.0} at a time (was {sb:.0}){pool}{set}"
        ));
    }
    match (pick.significant, pb, pa) {
        (Some(true), Some(p), Some(n)) => Some(format!(
            "the pick moved from {p:.0} to {n:.0} connections{set}"
        )),
        (Some(false), Some(p), Some(n)) if p == n => Some(format!("keep {p:.0}")),
        (Some(false), Some(p), Some(n)) => Some(format!(
            "keep {p:.0} (the search picked {n:.0}, within its resolution)"
        )),
        _ => None,
    }
}

/// A significant change in one sentence: `the knee fell 25% (24 → 18
/// in flight)`; a cliff that appeared or went.
fn moved(x: &Figure) -> Option<String> {
    if x.significant != Some(true) {
        return None;
    }
    let pct = x.change_pct?;
    let (b, a) = (x.before?, x.after?);
    if x.name == "cliff" && x.change_is != ChangeIs::Exact {
        let n = |r: Reading| number(&x.unit, r.value);
        return Some(match x.change_is {
            ChangeIs::AtMost => format!(
                "a cliff appeared at {} in flight (none up to {} before)",
                n(a),
                n(b)
            ),
            _ => format!(
                "the cliff at {} in flight is gone (none up to {} now)",
                n(b),
                n(a)
            ),
        });
    }
    let way = if pct < 0.0 { "fell" } else { "rose" };
    let bound = match x.change_is {
        ChangeIs::Exact => "",
        _ => "at least ",
    };
    Some(format!(
        "the {} {way} {bound}{:.0}% ({})",
        x.title,
        pct.abs(),
        x.values()
    ))
}

/// What keeps the two tunes from being like for like.
pub(crate) fn notes(b: &TuneResult, a: &TuneResult) -> Vec<String> {
    let load = |r: &TuneResult| match r.load {
        TuneLoad::Concurrency(c) => format!("c={c}"),
        TuneLoad::Rate(x) => format!("{} req/s", fmt_rate(x)),
    };
    let mut out = Vec::new();
    if b.load != a.load {
        out.push(format!(
            "tuned for different loads ({} before, {} after): the picks answer different questions",
            load(b),
            load(a)
        ));
    }
    if b.slo != a.slo {
        out.push("tuned with different --slo bounds: the picks meet different bounds".into());
    }
    if b.machine.cores != a.machine.cores {
        out.push(format!(
            "measured on machines of {} and {} cores",
            b.machine.cores, a.machine.cores
        ));
    }
    for (side, r) in [("before", b), ("after", a)] {
        if let Some(why) = &r.stopped_early {
            out.push(format!(
                "the {side} search stopped early ({why}): its figures may be partial"
            ));
        }
    }
    out
}
