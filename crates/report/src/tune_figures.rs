//! A tune's rows of the figure list: what each figure is (its
//! `--fail-if` name, unit, and what its interval is) and its reading on
//! each side. The peak and the pick's throughput are judged by their 95%
//! intervals, the counts by the search's resolution, the pick's p99 by
//! its readings.
use crate::figures::{Figure, FigureKind, Reading};
use poolbench_model::{TunePhase, TuneResult};

const RESOLUTION: &str = "the search's resolution, max(1, 10%)";
const CI95: &str = "the 95% half-widths";
/// tune takes a pool within 5% of the best as good as the best (its
/// intervals come from runs minutes apart at most; two searches lie
/// further apart than that on a shared machine), so a throughput's
/// change of 5% or less is no change to it either.
const TIE_PCT: f64 = (1.0 - poolbench_tune::WITHIN_BEST) * 100.0;
const TIE_WHY: &str = "tune reads throughputs that close as equal";

pub(crate) const PEAK: FigureKind = FigureKind {
    name: "peak",
    title: "peak throughput",
    unit: "req/s",
    spread: CI95,
    floor_pct: TIE_PCT,
    floor_why: TIE_WHY,
};
pub(crate) const KNEE: FigureKind = FigureKind {
    name: "knee",
    title: "knee",
    unit: "in flight",
    spread: RESOLUTION,
    floor_pct: 0.0,
    floor_why: "",
};
pub(crate) const SERVES: FigureKind = FigureKind {
    name: "serves",
    title: "serves at once",
    unit: "in flight",
    spread: RESOLUTION,
    floor_pct: 0.0,
    floor_why: "",
};
pub(crate) const CLIFF: FigureKind = FigureKind {
    name: "cliff",
    title: "cliff",
    unit: "in flight",
    spread: RESOLUTION,
    floor_pct: 0.0,
    floor_why: "",
};
pub(crate) const PICK: FigureKind = FigureKind {
    name: "pick",
    title: "pick",
    unit: "connections",
    spread: RESOLUTION,
    floor_pct: 0.0,
    floor_why: "",
};
pub(crate) const THROUGHPUT: FigureKind = FigureKind {
    name: "throughput",
    title: "throughput at the pick",
    unit: "req/s",
    spread: CI95,
    floor_pct: TIE_PCT,
    floor_why: TIE_WHY,
};
pub(crate) const P99: FigureKind = FigureKind {
    name: "p99",
    title: "p99 at the pick",
    unit: "µs",
    spread: "its readings",
    floor_pct: 0.0,
    floor_why: "",
};

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
