//! Two saved tunes compared, as a CI capacity gate: the change of each
//! capacity figure (peak, knee, serves at once, cliff) and of the pick
//! (its pool size, throughput and p99), each judged against its interval,
//! and what the change means in words (`tune_words.rs`).
use crate::figures::{Figure, FigureComparison, FigureKind, Reading};
use crate::tune_words::{notes, summary};
use poolbench_model::{TunePhase, TuneResult};

const RESOLUTION: &str = "the search's resolution, max(1, 10%)";
const CI95: &str = "the 95% half-widths";

pub(crate) const PEAK: FigureKind = FigureKind {
    name: "peak",
    title: "peak throughput",
    unit: "req/s",
    spread: CI95,
};
pub(crate) const KNEE: FigureKind = FigureKind {
    name: "knee",
    title: "knee",
    unit: "in flight",
    spread: RESOLUTION,
};
pub(crate) const SERVES: FigureKind = FigureKind {
    name: "serves",
    title: "serves at once",
    unit: "in flight",
    spread: RESOLUTION,
};
pub(crate) const CLIFF: FigureKind = FigureKind {
    name: "cliff",
    title: "cliff",
    unit: "in flight",
    spread: RESOLUTION,
};
pub(crate) const PICK: FigureKind = FigureKind {
    name: "pick",
    title: "pick (pool size)",
    unit: "connections",
    spread: RESOLUTION,
};
pub(crate) const THROUGHPUT: FigureKind = FigureKind {
    name: "throughput",
    title: "throughput at the pick",
    unit: "req/s",
    spread: CI95,
};
pub(crate) const P99: FigureKind = FigureKind {
    name: "p99",
    title: "p99 at the pick",
    unit: "µs",
    spread: "its readings",
};

/// `before` against `after`: the figures, and what they mean.
pub fn compare_tunes(before: &TuneResult, after: &TuneResult) -> FigureComparison {
    let figures = tune_figures(before, after);
    FigureComparison {
        kind: "tune".to_string(),
        base: before.target.clone(),
        new: after.target.clone(),
        summary: summary(before, after, &figures),
        notes: notes(before, after),
        figures,
    }
}

/// A tune's rows of the figure list, in the order the report shows them.
pub fn tune_figures(b: &TuneResult, a: &TuneResult) -> Vec<Figure> {
    let pick = |r: &TuneResult| {
        r.recommendation
            .as_ref()
            .map(|p| Reading::count(p.pool_size))
    };
    let rps = |r: &TuneResult| {
        let p = r.recommendation.as_ref()?;
        Some(Reading::exact(p.throughput_rps, p.throughput_ci95))
    };
    let p99 = |r: &TuneResult| {
        let p = r.recommendation.as_ref()?;
        Some(Reading::exact(p.p99_us, None))
    };
    let serves = |r: &TuneResult| r.capacity.serves_at_once.map(Reading::count);
    vec![
        Figure::judged(&PEAK, peak(b), peak(a)),
        Figure::judged(&KNEE, knee(b), knee(a)),
        Figure::judged(&SERVES, serves(b), serves(a)),
        Figure::judged(&CLIFF, cliff(b), cliff(a)),
        Figure::judged(&PICK, pick(b), pick(a)),
        Figure::judged(&THROUGHPUT, rps(b), rps(a)),
        Figure::judged_by_readings(&P99, (p99(b), p99(a)), (&pick_p99s(b), &pick_p99s(a))),
    ]
}

/// The peak; while throughput was still rising at the most tried, only
/// a lower bound of it.
fn peak(r: &TuneResult) -> Option<Reading> {
    let c = &r.capacity;
    (c.max_rps > 0.0).then_some(Reading {
        value: c.max_rps,
        half_width: c.max_rps_ci95,
        at_least: c.still_rising,
    })
}

/// The knee; no knee while still rising: beyond the most tried.
fn knee(r: &TuneResult) -> Option<Reading> {
    let c = &r.capacity;
    match (c.knee_in_flight, c.still_rising) {
        (Some(k), _) => Some(Reading::count(k)),
        (None, true) if c.most_in_flight_tried > 0 => Some(beyond(c.most_in_flight_tried)),
        (None, _) => None,
    }
}

/// The cliff; none found: beyond the most tried.
fn cliff(r: &TuneResult) -> Option<Reading> {
    let c = &r.capacity;
    match c.cliff_in_flight {
        Some(n) => Some(Reading::count(n)),
        None if c.most_in_flight_tried > 0 => Some(beyond(c.most_in_flight_tried)),
        None => None,
    }
}

fn beyond(n: usize) -> Reading {
    Reading {
        at_least: true,
        ..Reading::count(n)
    }
}

/// Every p99 the tune measured at its pick, at the client's load: its
/// pool-search and confirmation points, the repetitions a p99 has.
pub(crate) fn pick_p99s(r: &TuneResult) -> Vec<f64> {
    let Some(p) = &r.recommendation else {
        return Vec::new();
    };
    r.points
        .iter()
        .filter(|x| matches!(x.phase, TunePhase::Pool | TunePhase::Confirm))
        .filter(|x| x.strategy == p.spec && x.requests > 0)
        .map(|x| x.p99_us)
        .collect()
}
