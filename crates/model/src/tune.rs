//! What `poolbench tune` found: the service's capacity measured from
//! outside, the pool size to set with its proof, every point measured.
//! Saved as JSON (`tune --format json`; the schema is [`tune_schema`]).
use crate::client_setting::ClientSetting;
use crate::findings::Finding;
use crate::machine::Machine;
use crate::slo::Slo;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field of [`TuneResult`] changes meaning or goes away.
pub const TUNE_SCHEMA_VERSION: u32 = 3;

/// Everything one `poolbench tune` measured and concluded.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneResult {
    pub schema_version: u32,
    /// The target URL (no password), or the built-in server's.
    pub target: String,
    pub machine: Machine,
    /// When the search started (RFC 3339, UTC).
    pub started_at: String,
    /// The client's load the answer is for.
    pub load: TuneLoad,
    /// The bounds a pool must meet (`--slo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// The whole search's time budget, seconds.
    pub budget_s: f64,
    /// Strategy families searched (`pool`, `shared`, `round-robin`).
    pub families: Vec<String>,
    /// The service's capacity, from outside.
    pub capacity: Capacity,
    /// The answer; `None` with `reason`.
    pub recommendation: Option<TuneRecommendation>,
    /// Why there is no recommendation (`null` when there is one).
    #[serde(default)]
    pub reason: Option<String>,
    /// Each family's own best pool, the recommended one among them.
    #[serde(default)]
    pub families_found: Vec<FamilyAnswer>,
    /// What a person would conclude from the points, in words.
    pub inferences: Vec<Inference>,
    /// Every point measured, in order.
    pub points: Vec<TunePoint>,
    /// The pool sizes compared with the reference, paired (the pool search
    /// and its confirmation decide on these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<TuneComparison>,
    /// Findings seen in the points (the same ids as `run`'s).
    pub findings: Vec<Finding>,
    /// Bounds for an adaptive concurrency limiter (the knee to start
    /// from, the cliff as its ceiling), for those who run one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<crate::AdaptiveBounds>,
    /// `--replicas`: the pool per replica run as that many client
    /// processes at once, against one process with the whole pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet_check: Option<crate::FleetCheck>,
    /// The pool per replica for `--replicas` (`null` without it).
    pub fleet: Option<crate::fleet::Fleet>,
    /// Why the search ended before it was complete, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Wall time of the whole search, seconds.
    pub elapsed_s: f64,
    /// What the server does with idle connections, read or measured
    /// (`None`: not looked at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_idle: Option<crate::ServerIdle>,
    /// How many load threads the search measured with, and why (`None`:
    /// as given with `--threads`, or not chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_threads: Option<GeneratorThreads>,
}

/// The generator's thread count, chosen by a paired comparison: one load
/// thread against one per core, at the first level where the generator
/// was busy. On a machine it shares with the service, a thread more than
/// the load needs takes cores from the service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GeneratorThreads {
    /// The threads every later point ran with.
    pub threads: usize,
    /// The requests in flight the two were compared at.
    pub in_flight: usize,
    /// Mean throughput of one thread's rounds, req/s.
    pub one_rps: f64,
    /// The other count compared (one per core), and its rounds' mean.
    pub many: usize,
    pub many_rps: f64,
}

impl TuneResult {
    /// A search about to begin: what was asked, of what, when; nothing
    /// measured yet.
    pub fn begin(
        target: String,
        load: TuneLoad,
        slo: Option<Slo>,
        budget_s: f64,
        families: Vec<String>,
    ) -> TuneResult {
        TuneResult {
            schema_version: TUNE_SCHEMA_VERSION,
            target,
            machine: Machine::current(),
            started_at: crate::duration::now_rfc3339(),
            load,
            slo,
            budget_s,
            families,
            capacity: Capacity::default(),
            recommendation: None,
            reason: None,
            families_found: Vec::new(),
            inferences: Vec::new(),
            points: Vec::new(),
            comparisons: Vec::new(),
            findings: Vec::new(),
            adaptive: None,
            fleet_check: None,
            fleet: None,
            stopped_early: None,
            elapsed_s: 0.0,
            server_idle: None,
            generator_threads: None,
        }
    }
}

/// The client's load: `{"concurrency": C}` or `{"rate": R}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TuneLoad {
    /// Closed loop: this many workers (threads, tasks) each with one
    /// request at a time.
    Concurrency(usize),
    /// Open loop: arrivals per second.
    Rate(f64),
}

/// How the service broke at its cliff.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CliffKind {
    /// It froze: nothing answered, or a stall with requests in flight.
    Freezes,
    /// It failed: errors, or too few of the requests answered.
    Fails,
}

/// The service's capacity curve, measured with one connection per request
/// in flight (so no client pool is in the way).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Capacity {
    /// Highest throughput of a point that did not fail, req/s.
    pub max_rps: f64,
    /// Half-width of its 95% confidence interval.
    pub max_rps_ci95: Option<f64>,
    /// Requests in flight at that point.
    pub max_rps_in_flight: usize,
    /// Fewest in flight where the fitted curve reaches 95% of its peak
    /// (`None` while
    /// `still_rising`: no knee was reached).
    pub knee_in_flight: Option<usize>,
    /// Fewest in flight where p99 broke the SLO's bound (`None`: never,
    /// or no p99 bound).
    pub slo_in_flight: Option<usize>,
    /// Fewest in flight where errors, timeouts, stalls or a collapse of
    /// throughput began (`None`: none up to the most tried).
    pub cliff_in_flight: Option<usize>,
    /// What happened at the cliff.
    pub cliff_reason: Option<String>,
    /// Whether the service froze or failed at the cliff (`None`: no
    /// cliff, or a result saved before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cliff_kind: Option<CliffKind>,
    /// How many requests the service works on at once, by Little's law,
    /// where throughput stops growing while latency grows linearly.
    pub serves_at_once: Option<usize>,
    /// Mean latency with one request in flight, µs: the service time.
    pub service_time_us: Option<f64>,
    /// Fewest in flight past the peak where throughput fell below 90% of it
    /// without errors (retrograde scaling).
    pub retrograde_from: Option<usize>,
    /// Most requests in flight tried.
    pub most_in_flight_tried: usize,
    /// Throughput was still rising at the most tried: the service was
    /// never pushed to its limit, so `max_rps` is not its peak.
    #[serde(default)]
    pub still_rising: bool,
    /// The curve fitted through the capacity points (isotonic regression,
    /// each point weighted by its runs; a fall past the peak to below 75%
    /// of it left out): the knee and the peak are read off it, so one
    /// noisy point does not decide them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fitted: Vec<CurvePoint>,
}

/// One point of a fitted curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurvePoint {
    pub in_flight: usize,
    pub throughput_rps: f64,
}

/// A pool size measured against the search's reference (the client's
/// load on as many connections), paired and interleaved: size, reference,
/// size, reference … so drift of the machine touches both alike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneComparison {
    pub phase: TunePhase,
    /// The strategy family (`pool`, `round-robin`).
    pub family: String,
    /// Connections of the size compared.
    pub pool_size: usize,
    /// Connections of the reference.
    pub reference: usize,
    /// Each round's throughput of the size over the reference's.
    pub ratios: Vec<f64>,
    /// Why these rounds do not count, where they do not: on a service that
    /// does not slow with more connections they read far under a smaller
    /// size's, so the machine moved them (its speed changed between the
    /// halves of the rounds), and the size was compared again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_aside: Option<String>,
}

/// The pool to set, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneRecommendation {
    /// The family (`pool`, `round-robin`, `shared`).
    pub strategy: String,
    /// The strategy as `run` names it (`pool:24`).
    pub spec: String,
    /// Connections.
    pub pool_size: usize,
    pub throughput_rps: f64,
    pub throughput_ci95: Option<f64>,
    pub p99_us: f64,
    /// The client's load is above the service's cliff, so the pool is a cap
    /// on requests in flight: why, in words ("above 15 in flight this
    /// service freezes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<String>,
    /// Smaller sizes measured as a tie with this one (the smallest wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tied_with: Vec<usize>,
    /// How to set it in the clients people use (`settings` before schema
    /// version 2).
    #[serde(alias = "settings")]
    pub client_settings: Vec<ClientSetting>,
    /// The acquire timeout and idle timeout to set with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<crate::PoolTimeouts>,
}

/// One family's best pool, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FamilyAnswer {
    pub family: String,
    pub pool_size: Option<usize>,
    pub throughput_rps: Option<f64>,
    pub p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Which part of the search measured a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TunePhase {
    /// The service's capacity: one connection per request in flight.
    Capacity,
    /// Waiting for the service to recover after a failing point.
    Recovery,
    /// The pool size, at the client's load.
    Pool,
    /// The chosen size and its neighbours, repeated.
    Confirm,
}

/// One measured point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TunePoint {
    pub phase: TunePhase,
    /// The strategy run (`pool:24`).
    pub strategy: String,
    /// Requests in flight asked for (closed-loop workers; open loop: the cap).
    pub in_flight: usize,
    /// Connections of the strategy.
    pub pool_size: usize,
    /// Open loop: the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Runs combined into this point.
    pub runs: usize,
    /// Measured seconds, over all runs.
    pub duration_s: f64,
    pub requests: u64,
    pub errors: u64,
    pub error_rate: f64,
    /// Errors by kind (timeout, refused, reset, status, …).
    #[serde(default)]
    pub errors_by_kind: std::collections::BTreeMap<String, u64>,
    pub throughput_rps: f64,
    pub throughput_ci95: Option<f64>,
    /// The throughput (and its interval) came from the latency by Little's
    /// law (workers ÷ mean latency), every request having completed: for
    /// services slow against the window, where counting answers is coarse.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub throughput_from_latency: bool,
    pub p50_us: f64,
    pub p99_us: f64,
    /// Mean latency of successes, µs.
    pub mean_us: f64,
    /// Share of the latency spent waiting for a connection.
    pub checkout_wait_share: f64,
    /// Seconds with requests in flight and no success.
    pub stalled_s: f64,
    /// Requests in flight, time-averaged (throughput × mean latency).
    pub achieved_in_flight: f64,
    pub generator_cpu: Option<f64>,
    /// The generator's own stalls (hiccup meter), p99, µs.
    pub hiccup_p99_us: f64,
    /// Multiplexed strategies: the fewest streams a server allowed on one
    /// of the point's connections (`None`: no limit, or one request per
    /// connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_allowed: Option<u64>,
    /// p99.9 of the checkout wait (waiting for a connection), µs, over
    /// the point's runs (`None` in results saved before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout_wait_p999_us: Option<f64>,
}

/// A conclusion in words, with the figures it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inference {
    /// Which conclusion it is (`poolbench explain ID` says what each
    /// means).
    pub id: crate::inference::InferenceId,
    pub text: String,
    pub evidence: String,
}

/// The JSON Schema of a [`TuneResult`] (`poolbench schema tune`).
pub fn tune_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(TuneResult)).expect("a schema serializes");
    schema["title"] = format!("poolbench tune result, schema version {TUNE_SCHEMA_VERSION}").into();
    schema["properties"]["schema_version"]["const"] = TUNE_SCHEMA_VERSION.into();
    schema
}
