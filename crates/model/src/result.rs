//! Everything a run measured: the run, its cells, their counts and
//! histograms, and what the analysis found. Saved as JSON (the schema is
//! [`result_schema`]).
use crate::findings::{Finding, Recommendation, UslFit};
use crate::histogram::{decode_histogram, Summary};
use crate::label::cell_label;
use crate::latency_interval::LatencyInterval;
use crate::machine::Machine;
use crate::pipeline::PipelineProbe;
use crate::plan::Plan;
use crate::ramp::RampSummary;
use crate::sample::Sample;
use crate::server_counters::ServerCounters;
use crate::shard::ShardStamp;
use crate::timeline::{Stall, Timeline};
use crate::tls_facts::TlsFacts;
use hdrhistogram::Histogram;
use poolbench_pool_types::PoolCounters;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 3;

/// Everything one `poolbench run` measured.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    pub schema_version: u32,
    /// The target URL, or `embedded` details.
    pub target: String,
    pub machine: Machine,
    /// The effective plan.
    pub config: Plan,
    /// The built-in server's settings, when the run used it.
    pub server: Option<serde_json::Value>,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// The signal that stopped the run early (`SIGINT`, `SIGTERM`): the
    /// cells after the interrupted one were not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    pub cells: Vec<CellResult>,
    /// With `--stop-on-slo`: the cells not run, a strategy having broken
    /// the SLO in two cells in a row below them, each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedCell>,
    /// What the analysis found (what may make these numbers lie, and
    /// more), each with its evidence. `pitfalls` before schema version 2.
    #[serde(alias = "pitfalls")]
    pub findings: Vec<Finding>,
    /// The strategy and smallest pool size worth using, where one stands out.
    pub recommendation: Option<Recommendation>,
    /// Why there is no recommendation, when there is none.
    /// `no_recommendation` before schema version 2.
    #[serde(
        default,
        alias = "no_recommendation",
        skip_serializing_if = "Option::is_none"
    )]
    pub reason: Option<String>,
    /// A Universal Scalability Law fit per strategy with at least four
    /// concurrency levels (closed loop).
    #[serde(default)]
    pub scaling: Vec<UslFit>,
    /// The pipelining probe's findings (`--pipeline`).
    pub pipeline: Option<PipelineProbe>,
    /// A shard's result (`--shard I/N`): which share of which plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardStamp>,
    /// A merge of shards: how many there were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<usize>,
    /// `--threads` not given: one load thread against one per core,
    /// compared on the largest cell before the others; `config.threads`
    /// is the count kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_threads: Option<crate::GeneratorThreads>,
}

/// One strategy at one concurrency.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellResult {
    pub strategy: String,
    /// Closed-loop workers; for the open loop, the cap on requests in flight.
    pub concurrency: usize,
    pub pool_size: Option<usize>,
    /// Most connections the strategy may open (`None`: no limit).
    pub connection_cap: Option<usize>,
    /// `closed`, `open` or `batch`.
    pub model: String,
    /// Runs of this cell (each with fresh connections).
    pub reps: usize,
    /// A stop (SIGINT, SIGTERM) ended this cell early: its figures cover
    /// the window up to the stop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Requests the server never processed (HTTP/2 RST_STREAM
    /// REFUSED_STREAM or a stream above a GOAWAY's last stream id; a
    /// kept-alive connection closed before the request went), sent again
    /// on another connection: not errors.
    #[serde(default)]
    pub resent: u64,
    /// Reuses of connections that had sat idle: those the server had
    /// closed, and the longest idle that still worked.
    #[serde(default, skip_serializing_if = "crate::IdleReuse::is_empty")]
    pub idle_reuse: crate::IdleReuse,
    /// With `--slo`: the bounds this cell broke (empty: it met them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_breaches: Option<Vec<String>>,
    /// Measured seconds: the window after warm-up (to the last counted
    /// completion when a request budget ran out first, or to a stop).
    pub duration_s: f64,
    /// Measured requests that completed, successful or not.
    pub requests: u64,
    /// Of those, successful.
    pub ok: u64,
    /// Requests during warm-up (not measured).
    pub warmup_requests: u64,
    /// Requests that completed after the measured window (or past the
    /// request budget); not measured.
    pub after_end: u64,
    /// Requests still in flight when the cell's drain time ran out.
    pub unfinished: u64,
    pub errors: Errors,
    /// Successful requests per second (the mean over samples where there
    /// are several).
    pub throughput_rps: f64,
    /// Half-width of the 95% confidence interval of `throughput_rps`
    /// (`None` with fewer than two samples).
    pub throughput_ci95: Option<f64>,
    /// Half-width of the 95% confidence interval of the p99 latency, in µs.
    pub p99_ci95_us: Option<f64>,
    /// Repetitions, or batch samples: each one's throughput and p99.
    pub samples: Vec<Sample>,
    /// Open loop: the rate asked for.
    pub requested_rate: Option<f64>,
    /// Completed requests (successful or not) per second.
    pub achieved_rate: f64,
    /// Throughput × mean latency: the concurrency the load really had.
    pub achieved_concurrency: f64,
    /// Open loop: requests sent more than 1 ms after their intended time.
    pub late: u64,
    /// Open loop: requests not sent, being a timeout behind schedule.
    pub dropped: u64,
    /// Successful requests: checkout wait plus request time (closed loop,
    /// batch); from the intended send time (open loop).
    pub latency_us: Summary,
    /// Open loop: from the actual send (the request time), which hides the
    /// time requests spent queued behind a slow answer.
    pub latency_uncorrected_us: Option<Summary>,
    /// Open loop: how long after its intended time each measured request
    /// was sent, the pacer's own error (`late` counts those above 1 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_us: Option<Summary>,
    /// How late a thread sleeping 1 ms in a loop woke while the cell was
    /// measured (as jHiccup meters a process): a stall of the generator
    /// itself, which every latency it measured may contain.
    #[serde(default)]
    pub generator_hiccups_us: Summary,
    /// Time waiting for a connection (or a stream on a shared one), not
    /// counting the connect itself.
    pub checkout_wait_us: Summary,
    /// Connects done by the checkouts of successful requests (a TLS
    /// handshake included): one value per connect.
    pub connect_us: Summary,
    /// Time from having a connection to the whole answer.
    pub request_us: Summary,
    /// Part of the request: from sending it to the answer's first byte
    /// (time to first byte), where the protocol tells (HTTP/1.1, HTTP/2
    /// and gRPC, over TLS too; not PostgreSQL, Redis or the h2 crate's
    /// client); `None` where it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_us: Option<Summary>,
    /// The rest of the request: from the answer's first byte to its last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_byte_us: Option<Summary>,
    /// Pipelining (`pipeline:NxD`): of each request, the time from its
    /// write until the answer before it on the same connection was whole
    /// (head-of-line blocking); `None` for strategies that do not pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_us: Option<Summary>,
    /// Body bytes of the successful measured answers, in all (0 where
    /// unknown: a result from before it was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub body_bytes: u64,
    pub connections: Connections,
    /// The strategy's own counters over the whole cell.
    pub pool: PoolCounters,
    /// The server's counters over the whole cell, where readable.
    pub server: Option<ServerCounters>,
    /// TLS targets: the client's handshakes over the cell (full and
    /// resumed, version, cipher suite, ALPN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsFacts>,
    /// Share of the machine's cores poolbench used (0..1), where known;
    /// with the built-in server in-process, the server's share counts too.
    pub generator_cpu: Option<f64>,
    /// Share of all the machine's cores busy (anything running), where known.
    pub machine_cpu: Option<f64>,
    /// Connections opened inside the measured window.
    pub opened_during_measurement: u64,
    /// Connections opened inside the measured window to replace closed
    /// ones (beyond the most open at once).
    pub reopened: u64,
    /// Completions, errors and in-flight requests per 100 ms (first run).
    pub timeline: Timeline,
    /// Stretches with requests in flight and no success (any run).
    pub stalls: Vec<Stall>,
    pub histograms: Histograms,
    /// With `--hdr-log` or `--ramp`: latency per second of the measured
    /// window, every run of the cell, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_intervals: Vec<LatencyInterval>,
    /// With `--ramp`: the first run, second by second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<RampSummary>,
    /// Wall-clock start of the first run (Unix seconds): the timeline's
    /// zero. Shards' timelines are aligned on it when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<f64>,
    /// With `--start-at`: how late the latest run started its warm-up
    /// against its slot, in ms (its slot was taken by the run before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<f64>,
    /// A merge of shards: each shard's part of this cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardPart>,
}

/// A cell of the grid that `--stop-on-slo` did not run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedCell {
    pub strategy: String,
    /// Closed-loop workers (the open loop's cap on requests in flight).
    pub concurrency: usize,
    pub pool_size: Option<usize>,
    /// Why, naming the cells below it that broke the SLO and the bounds
    /// they broke: `pool:24 broke p99 < 50.0 ms at c=64 and c=128`.
    pub reason: String,
}

impl SkippedCell {
    /// The cell's name in tables and findings (`pool:16 c=100`).
    pub fn label(&self) -> String {
        cell_label(&self.strategy, self.concurrency)
    }
}

/// One shard's part of a merged cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardPart {
    pub shard: usize,
    /// Its own strategy and workers (`pool:5 c=25`).
    pub cell: String,
    pub started_unix_s: Option<f64>,
    pub requests: u64,
    pub throughput_rps: f64,
    pub p99_us: f64,
    pub connections_opened: u64,
    pub generator_cpu: Option<f64>,
    pub machine_cpu: Option<f64>,
}

/// Errors counted by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Errors {
    pub total: u64,
    pub by_kind: BTreeMap<String, u64>,
    /// Errors that carried a protocol status code: HTTP status, gRPC
    /// code, MySQL error number, or PostgreSQL SQLSTATE (five characters,
    /// `22012`, `42P05`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_status: BTreeMap<String, u64>,
    /// The first message the server gave with each code of `by_status`
    /// (e.g. `"division by zero (22012)"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub messages: BTreeMap<String, String>,
}

/// Client-side connection counts over the cell (warm-up included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Connections {
    pub opened: u64,
    pub closed: u64,
    pub peak_open: u64,
    /// Idle connections the strategy kept when the load stopped.
    pub idle_at_end: u64,
    /// Completed requests (warm-up included) per connection opened.
    pub requests_per_connection: f64,
    /// Seconds from the cell's start until the last connection opened in
    /// the warm-up was ready (the longest over repetitions): how long
    /// opening them all took. `None` without a warm-up connect.
    #[serde(default)]
    pub opened_in_warmup_by_s: Option<f64>,
}

/// Raw histograms (nanoseconds, HdrHistogram V2, base64) for exact merging.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Histograms {
    pub latency_ns: String,
    pub checkout_wait_ns: String,
    pub request_ns: String,
    #[serde(default)]
    pub connect_ns: String,
    /// Open loop: the send lag.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub send_lag_ns: String,
    /// The hiccup meter's wake-up delays.
    #[serde(default)]
    pub generator_hiccups_ns: String,
    /// Sent to the answer's first byte, where the protocol tells.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_byte_ns: String,
    /// The answer's first byte to its last, where the protocol tells.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_byte_ns: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Histograms {
    /// Decode the three histograms: latency, checkout wait, request.
    pub fn decode(&self) -> Result<[Histogram<u64>; 3], String> {
        Ok([
            decode_histogram(&self.latency_ns)?,
            decode_histogram(&self.checkout_wait_ns)?,
            decode_histogram(&self.request_ns)?,
        ])
    }
}

impl CellResult {
    /// The cell's name in tables and findings (`pool:16 c=100`).
    pub fn label(&self) -> String {
        cell_label(&self.strategy, self.concurrency)
    }

    /// Error rate over completed requests, 0..=1.
    pub fn error_rate(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.errors.total as f64 / self.requests as f64
        }
    }
}

/// The JSON Schema of a [`RunResult`] (what `poolbench schema` prints),
/// for this [`SCHEMA_VERSION`]: its `schema_version` is held to it.
pub fn result_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(RunResult)).expect("a schema serializes");
    schema["title"] = format!("poolbench result, schema version {SCHEMA_VERSION}").into();
    schema["properties"]["schema_version"]["const"] = SCHEMA_VERSION.into();
    schema
}
