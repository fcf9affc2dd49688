//! `poolbench tune`'s arguments.
use crate::parse;
use crate::request_args::RequestArgs;
use clap::{Args, ValueEnum};
use poolbench_model::StrategySpec;
use poolbench_server::DelaySpec;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("load").required(true).args(["concurrency", "rate", "find_rate"])))]
pub(crate) struct TuneArgs {
    /// The service to search, e.g. http://127.0.0.1:8080/. Omit it to use
    /// the built-in server (with --server-delay and --server-max-inflight).
    pub(crate) target: Option<String>,

    /// The client's concurrency: the workers, threads or tasks that each
    /// send one request at a time.
    #[arg(short, long, value_parser = parse::concurrency)]
    pub(crate) concurrency: Option<usize>,

    /// The client's load as arrivals per second (open loop), instead of -c.
    #[arg(long, value_parser = parse::rate)]
    pub(crate) rate: Option<f64>,

    /// Search the other way round: the highest open-loop rate the service
    /// holds within --slo (needed), each point held (--hold) and judged
    /// sustained: the backlog (arrivals due minus completions) not
    /// growing, the late part of the hold not slower and fuller than the
    /// early. Rates double until one fails, then the gap is halved to 3%
    /// and the answer held twice more, longer. Exit 0 with a rate, 1 when
    /// none holds. One strategy (-s, default pool; shared for h2c and
    /// gRPC), as many connections as the rate needs up to --max-pool.
    #[arg(long)]
    pub(crate) find_rate: bool,

    /// --find-rate: how long each rate is held, after a warm-up (the
    /// answer's repetitions hold twice as long). [default: 100 latencies
    /// of one request alone, 3 s to 15 s]
    #[arg(long, value_parser = parse::positive_duration)]
    pub(crate) hold: Option<Duration>,

    /// Bounds the chosen pool (or, with --find-rate, the rate) must meet,
    /// e.g. 'p99<50ms,errors<1%' (also p50<D, throughput>N; p90<D and
    /// p99.9<D with --find-rate). Without an error bound, more than 1%
    /// errors fails a point.
    #[arg(long, value_name = "BOUNDS", value_parser = parse::slo)]
    pub(crate) slo: Option<poolbench_model::Slo>,

    /// The search's measuring time, every phase included. Waiting for a
    /// service that failed to recover (--recovery) is not counted: each
    /// failure may add up to that much.
    #[arg(long, default_value = "2m", value_parser = parse::positive_duration)]
    pub(crate) budget: Duration,

    /// After a failing point (errors, a freeze), how long to wait for the
    /// service to answer as before: one-request pings, then a level that
    /// was healthy re-measured. A service that has not recovered by then
    /// stops the search (no pool recommended, exit code 1). The default
    /// outlasts the 30 s checkout timeouts of SQLAlchemy and HikariCP.
    #[arg(long, default_value = "60s", value_parser = parse::positive_duration)]
    pub(crate) recovery: Duration,

    /// Strategy families to search (comma list): pool, round-robin,
    /// least-loaded, take-or-create, shared, per-request, pipeline.
    /// `pipeline` (http:// only, with -c): N connections searched as pool
    /// sizes are, each with ⌈C ÷ N⌉ requests written ahead; a server that
    /// does not answer pipelined requests is named and the family skipped.
    /// [default: pool for HTTP/1.1 and databases; shared and round-robin
    /// for h2c and gRPC]
    #[arg(short, long, value_delimiter = ',', value_parser = parse::strategy)]
    pub(crate) strategy: Vec<StrategySpec>,

    /// Largest pool size to consider (and most requests in flight the
    /// capacity search raises to; with --find-rate, the open loop's cap).
    /// [default: 4× the client's concurrency; with --find-rate 1,024, 64
    /// for databases; within the descriptor limit]
    #[arg(long, value_parser = parse::pool_size)]
    pub(crate) max_pool: Option<usize>,

    #[command(flatten)]
    pub(crate) request: RequestArgs,

    #[command(flatten)]
    pub(crate) fleet: crate::fleet_args::FleetArgs,

    #[command(flatten)]
    pub(crate) metrics: crate::metrics_args::MetricsArgs,

    #[command(flatten)]
    pub(crate) idle: crate::idle_args::IdleArgs,

    /// Per-request timeout, after checkout.
    #[arg(long, default_value = "5s", value_parser = parse::positive_duration)]
    pub(crate) timeout: Duration,

    /// Connect timeout.
    #[arg(long, default_value = "5s", value_parser = parse::positive_duration)]
    pub(crate) connect_timeout: Duration,

    /// Load-generator threads, fixed. Without it the search starts with
    /// one and compares it with one per core, paired, where that thread
    /// is busy (half a core; a quarter at the client's load), keeping
    /// more only when they carry 5% more (the JSON's `generator_threads`).
    #[arg(long, value_parser = parse::concurrency)]
    pub(crate) threads: Option<usize>,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = TuneFormat::Text)]
    pub(crate) format: TuneFormat,

    /// Also write the result to FILE (.json, .html or .txt); repeat.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Vec<PathBuf>,

    /// No progress lines.
    #[arg(short, long)]
    pub(crate) quiet: bool,

    /// Built-in server only: response delay. [default: 1ms]
    #[arg(long, value_parser = parse::delay)]
    pub(crate) server_delay: Option<DelaySpec>,

    /// Built-in server only: requests processed at once; excess wait.
    #[arg(long, value_parser = parse::pool_size)]
    pub(crate) server_max_inflight: Option<usize>,

    /// Built-in server only: freeze the whole server this long at the
    /// start of every --server-stall-every.
    #[arg(long, value_parser = parse::duration)]
    pub(crate) server_stall: Option<Duration>,

    /// Built-in server only: the period of --server-stall.
    #[arg(long, default_value = "5s", value_parser = parse::duration)]
    pub(crate) server_stall_every: Duration,
}

/// What `tune` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TuneFormat {
    /// The answer first, then the curve and every point.
    Text,
    /// The whole search as JSON (`poolbench schema tune`; with
    /// --find-rate, `poolbench schema rate`).
    Json,
    /// A self-contained HTML page with the capacity curve (with
    /// --find-rate, the rate curve).
    Html,
    /// Markdown: the answer, then every point as a table.
    Markdown,
}
