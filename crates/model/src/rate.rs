//! What `poolbench tune --find-rate` found: the highest open-loop rate the
//! service holds within the SLO, each point judged sustained or not, and
//! every point measured. Saved as JSON (`tune --find-rate --format json`;
//! the schema is [`rate_schema`]).
use crate::findings::Finding;
use crate::machine::Machine;
use crate::slo::Slo;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field of [`RateResult`] changes meaning or goes away.
pub const RATE_SCHEMA_VERSION: u32 = 1;

/// Everything one `poolbench tune --find-rate` measured and concluded.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateResult {
    pub schema_version: u32,
    /// The service searched.
    pub target: String,
    pub machine: Machine,
    /// When the search began (RFC 3339).
    pub started_at: String,
    /// The strategy every point ran (`pool:1024`: as many connections as
    /// the rate needs, opened as it needs them).
    pub strategy: String,
    /// The bounds a rate must hold.
    pub slo: Slo,
    /// How long each point of the search is held, seconds (measured, after
    /// its warm-up).
    pub hold_s: f64,
    /// How long each confirming repetition is held, seconds.
    pub confirm_hold_s: f64,
    /// The search's measuring time, seconds.
    pub budget_s: f64,
    /// Most requests in flight any point may allow (`--max-pool`): each
    /// point's own cap is `in_flight_cap`.
    pub most_in_flight: usize,
    /// Every point, in the order measured: the rate points.
    pub rate_points: Vec<RatePoint>,
    /// The answer (`None`: no rate held the SLO; `reason` says why).
    pub found: Option<FoundRate>,
    /// Why no rate is given.
    pub reason: Option<String>,
    /// Findings over every point (the generator's own limits among them).
    pub findings: Vec<Finding>,
    /// The search ended before it could decide (the budget, a stop, a
    /// service that did not recover): why.
    pub stopped_early: Option<String>,
    /// Seconds the search took, waiting for the service included.
    pub elapsed_s: f64,
}

/// What a point of the search is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatePhase {
    /// Raising the rate until a point fails.
    Bracket,
    /// Halving the gap between the highest rate held and the lowest failed.
    Bisect,
    /// The answer and the rate above it, repeated and held longer.
    Confirm,
}

/// How a point was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateVerdict {
    /// Within the SLO, and sustained: the backlog flat, late like early.
    Holds,
    /// A latency bound of the SLO broken.
    Latency,
    /// Errors above the SLO's bound (1% without one), timeouts included.
    Errors,
    /// Within the SLO so far, but not sustained: the backlog grew, or the
    /// late part of the hold was slower with more in flight.
    NotSustained,
    /// No request completed: a failure, never a clean zero.
    NoAnswer,
    /// poolbench could not send at the rate (its cores busy, its sends
    /// late): the point says nothing of the service.
    GeneratorLimited,
}

impl RateVerdict {
    pub fn holds(self) -> bool {
        self == RateVerdict::Holds
    }

    /// How a report names it.
    pub fn name(self) -> &'static str {
        match self {
            RateVerdict::Holds => "holds",
            RateVerdict::Latency => "latency",
            RateVerdict::Errors => "errors",
            RateVerdict::NotSustained => "not sustained",
            RateVerdict::NoAnswer => "no answer",
            RateVerdict::GeneratorLimited => "generator-limited",
        }
    }
}

/// One rate held once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RatePoint {
    pub phase: RatePhase,
    /// Arrivals asked for, req/s (the open loop's schedule).
    pub rate_rps: f64,
    /// Most requests in flight it allowed (the open loop's cap: four
    /// times what the rate needs at the latency of the highest rate held
    /// before it, and 8 more; requests beyond it wait to be sent, their
    /// latency counted from their intended time).
    #[serde(default)]
    pub in_flight_cap: usize,
    /// Seconds held (measured, after the warm-up).
    pub held_s: f64,
    /// Requests completed in the hold (errors included).
    pub requests: u64,
    pub errors: u64,
    /// Errors by kind (`timeout`, `connect` …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub errors_by_kind: std::collections::BTreeMap<String, u64>,
    /// Completions a second.
    pub completed_rps: f64,
    /// Latency from the intended send time (coordinated omission
    /// corrected), µs.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub mean_us: f64,
    /// The backlog (arrivals due minus completions) rising, req/s: the
    /// slope of a line fitted through it over the hold.
    pub backlog_growth_rps: f64,
    /// p99 of the first and of the last third of the hold, µs.
    pub early_p99_us: f64,
    pub late_p99_us: f64,
    /// Mean requests in flight in the first and in the last third.
    pub early_in_flight: f64,
    pub late_in_flight: f64,
    /// Connections open at most.
    pub connections: u64,
    /// p99 of how late requests left after their intended time, µs.
    pub send_lag_p99_us: f64,
    /// Share of the cores poolbench used.
    pub generator_cpu: Option<f64>,
    pub verdict: RateVerdict,
    /// What broke, in words (`None` when it holds).
    pub why: Option<String>,
}

/// The answer: the highest rate held, with where it broke.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FoundRate {
    /// The highest rate held in every check, req/s.
    pub rate_rps: f64,
    /// The lowest rate that failed above it, req/s (`None`: none failed
    /// within the most the search could send).
    pub fails_at_rps: Option<f64>,
    /// The gap between the two as a share of the answer: the answer lies
    /// within it.
    pub width: Option<f64>,
    /// How it failed there: the verdict of the failing point.
    pub fails_by: Option<RateVerdict>,
    /// And in words.
    pub fails_why: Option<String>,
    /// Repetitions at the answer that held, of those run.
    pub held: usize,
    pub repetitions: usize,
    /// Completions a second at the answer, mean over its repetitions, and
    /// the half-width of its 95% interval.
    pub completed_rps: f64,
    pub completed_ci95: Option<f64>,
    /// p99 at the answer (the worst repetition), µs.
    pub p99_us: f64,
    /// Requests in flight the rate needs, by Little's law: the rate times
    /// the mean latency measured at it.
    pub in_flight_needed: f64,
    /// Connections open at most at the answer (the pool measured).
    pub connections: u64,
    /// The whole answer as a sentence.
    pub summary: String,
}

impl RateResult {
    /// A search begun against `target`, nothing measured yet.
    pub fn begin(target: String, strategy: String, slo: Slo, budget_s: f64) -> RateResult {
        RateResult {
            schema_version: RATE_SCHEMA_VERSION,
            target,
            machine: Machine::current(),
            started_at: crate::duration::now_rfc3339(),
            strategy,
            slo,
            hold_s: 0.0,
            confirm_hold_s: 0.0,
            budget_s,
            most_in_flight: 0,
            rate_points: Vec::new(),
            found: None,
            reason: None,
            findings: Vec::new(),
            stopped_early: None,
            elapsed_s: 0.0,
        }
    }
}

/// The JSON Schema of a [`RateResult`] (`poolbench schema rate`).
pub fn rate_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(RateResult)).expect("a schema serializes");
    schema["title"] =
        format!("poolbench find-rate result, schema version {RATE_SCHEMA_VERSION}").into();
    schema["properties"]["schema_version"]["const"] = RATE_SCHEMA_VERSION.into();
    schema
}
