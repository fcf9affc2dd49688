use crate::metrics_args::MetricsArgs;
use crate::parse;
use clap::{Args, Parser, Subcommand, ValueEnum};
use poolbench_model::StrategySpec;
use poolbench_server::DelaySpec;
use std::path::PathBuf;
use std::time::Duration;

/// `poolbench --version`: the crate's version and the commit it was built
/// from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("POOLBENCH_COMMIT"),
    ")"
);

/// Which connection strategy and which pool size give the most throughput at
/// acceptable latency, and where does it break?
#[derive(Parser, Debug)]
#[command(
    name = "poolbench",
    version = VERSION,
    about,
    long_about = None,
    after_help = "The manual: docs/ in the source (README.md lists the pages: docs/run.md, docs/tune.md, \
docs/targets.md, docs/reports.md, docs/findings.md, docs/glossary.md, docs/faults.md, docs/scenarios.md …). \
`poolbench explain ID` explains a finding or an inference; `poolbench COMMAND --help` each command."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Drive a target through strategies × concurrency × pool sizes.
    ///
    /// Without TARGET, the built-in server is started in-process on a free
    /// loopback port and a default grid runs (about a minute and a half).
    Run(Box<RunArgs>),
    /// Find the pool size to set: search the service for its capacity
    /// (knee, cliff, how many it serves at once), then the smallest pool
    /// per strategy family that reaches the best throughput within the
    /// SLO at the client's load (-c C or --rate R), confirmed with
    /// repetitions; the answer first, with how to set it in common
    /// clients. Within --budget (2 min), every failure of the service
    /// waited out (--recovery) before the search goes on.
    ///
    /// Exit codes: 0 a pool recommended; 1 none (the reason in the
    /// report); 2 bad input or an unreachable target, before any load;
    /// 130/143 interrupted.
    Tune(Box<crate::tune_args::TuneArgs>),
    /// The connections a database or pooler holds now (PostgreSQL,
    /// MySQL/MariaDB, Redis, PgBouncer's admin console), grouped by client
    /// address, user, application, state and idle age, against its
    /// connection limit. No load.
    ///
    /// Exit codes: 0 read; 2 bad input or a server that cannot be reached.
    Census(crate::census_args::CensusArgs),
    /// Run the built-in target server (HTTP/1.1 and h2c on one port).
    ///
    /// With --check-client it watches your own client from the server's
    /// side (connections opened per request, in flight, idle gaps, how
    /// connections end, HTTP/2 streams) and, when the client is gone,
    /// says what its pool did and what to change (docs/check-client.md).
    ///
    /// Exit codes: 0 served (checked: every --expect held); 1 an --expect
    /// bound failed, or no client came within --check-timeout; 2 bad
    /// input or a port in use; 130/143 interrupted (the check's report
    /// still written).
    Serve(Box<crate::serve_args::ServeArgs>),
    /// Render a saved result (the JSON of `run -o`, `tune -o` or `serve
    /// --check-client -o`) again, in any format it has.
    Report(ReportArgs),
    /// Compare two saved results of one kind. Two runs, cell by cell: the
    /// change of throughput, p50, p99 and errors, significant or not
    /// (Welch's t-test on the repetitions, --reps 3 or more on both
    /// sides). Two tunes, figure by figure: the peak, knee, serves at
    /// once, cliff and the pick (its pool size, throughput and p99), each
    /// change judged against its interval, and what it means in words. A
    /// tune and a run are not compared (exit 2).
    ///
    /// Exit codes: 0 compared (every --fail-if bound held); 1 a
    /// significant change crossed a --fail-if bound; 2 bad input.
    Compare(CompareArgs),
    /// Merge results of the same plan run by several processes or machines
    /// at once: histograms added, counts and throughput summed.
    Merge(MergeArgs),
    /// Print the JSON Schema of a result (`run -o FILE.json`, `merge`,
    /// `report --format json`) or of a comparison (`compare --format json`).
    Schema(SchemaArgs),
    /// What a finding means, why it matters and what to do about it, by
    /// its id (`pool-bound`, `stall` …), as the reports name them, or what
    /// one of tune's inferences concludes (`serves-at-once`, `cliff` …);
    /// without an id, every id with its title. docs/findings.md is
    /// `explain --format markdown`; docs/glossary.md defines the terms.
    ///
    /// Exit codes: 0 explained; 2 an id this version does not know.
    Explain(ExplainArgs),
    /// The classic pool experiments as files: list them, show one (TOML,
    /// to copy and edit), or run one (built in, or a .toml file) with its
    /// expectations checked (exit 1 when one fails).
    Scenario(ScenarioArgs),
    /// Run a plan written by `tune --replicas` (one client process of the
    /// fleet it proves) and print its result as JSON.
    #[command(hide = true)]
    Replica(ReplicaArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ReplicaArgs {
    /// The plan, as JSON (with its shard and start time).
    pub(crate) plan: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct ScenarioArgs {
    #[command(subcommand)]
    pub(crate) command: ScenarioCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ScenarioCommand {
    /// The built-in scenarios, one line each.
    List,
    /// Print a scenario's TOML.
    Show {
        /// A built-in scenario's name, or a .toml file.
        name: String,
    },
    /// Run a scenario: each step's report, its expectations, and what the
    /// experiment shows.
    Run {
        /// A built-in scenario's name, or a .toml file.
        name: String,
        /// Also write each step's result to FILE, format by extension
        /// (FILE.2.json for the second of several steps); repeat. A .xml
        /// FILE gets the whole scenario's expectations as JUnit XML.
        #[arg(short, long, value_name = "FILE")]
        output: Vec<PathBuf>,
        /// text: each step's report and its expectations; junit: the
        /// expectations as JUnit XML on stdout (the reports go to stderr).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
        #[command(flatten)]
        metrics: MetricsArgs,
    },
}

#[derive(Args, Debug)]
pub(crate) struct SchemaArgs {
    /// Which document.
    #[arg(value_enum, default_value_t = SchemaOf::Result)]
    pub(crate) of: SchemaOf,
}

#[derive(Args, Debug)]
pub(crate) struct ExplainArgs {
    /// A finding's id, as a report names it (`pool-bound`).
    pub(crate) id: Option<String>,
    /// text: for a terminal; markdown: every finding as one page (the
    /// id, if given, is ignored).
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub(crate) format: ExplainFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainFormat {
    Text,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaOf {
    /// What `run`, `merge` and `report` write as JSON.
    Result,
    /// What `compare --format json` prints for two runs.
    Comparison,
    /// What `compare --format json` prints for two tunes.
    FigureComparison,
    /// What `tune --format json` prints.
    Tune,
    /// What `tune --find-rate --format json` prints.
    Rate,
}

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// Results written by `run -o FILE.json`, all of the same plan: runs
    /// side by side (two or more), or every shard of a plan run with
    /// `--shard I/N` (all N; a missing one is named).
    #[arg(required = true, num_args = 1..)]
    pub(crate) results: Vec<PathBuf>,
    /// Write the merged result to FILE (format by extension); repeat.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Vec<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The result to compare against (`run -o BASE.json` or `tune -o
    /// BEFORE.json`).
    pub(crate) base: PathBuf,
    /// The result compared, of the same kind.
    pub(crate) new: PathBuf,
    /// Exit 1 when a significant change crosses a bound. Two runs, per
    /// matched cell: throughput, p50, p99 in %, errors in percentage
    /// points, e.g. 'throughput<-5%,p99>+10%'. Two tunes, in %: peak (the
    /// peak throughput), knee, serves (serves at once), cliff, pick (the
    /// pick's pool size), throughput and p99 (at the pick), e.g.
    /// 'peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%'. Two
    /// find-rates (tune --find-rate), in %: rate (the rate held),
    /// throughput and p99 (at it), e.g. 'rate<-10%'. A change that is not
    /// significant, or cannot be told, crosses no bound.
    #[arg(long, value_name = "BOUNDS")]
    pub(crate) fail_if: Option<String>,
    /// What to print on stdout: text, json, markdown or html (csv is
    /// refused).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Also write the comparison to FILE, in the format its extension
    /// names (.txt, .json, .md, .html, .xml for JUnit); repeat.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// A result written by `poolbench run -o FILE.json` (or merge,
    /// scenario), by `poolbench tune -o FILE.json`, or by `poolbench serve
    /// --check-client -o FILE.json`.
    pub(crate) result: PathBuf,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// Also write it to FILE, in the format its extension names; repeat.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) views: ViewArgs,
}

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// Where to send load: http://, h2c://, https://, grpc://, grpcs://,
    /// postgres://, mysql:// (mariadb://), redis://, rediss://, e.g.
    /// http://127.0.0.1:8080/. Omit it to use the built-in server.
    pub(crate) target: Option<String>,

    /// Strategies (repeat or comma list): per-request, shared,
    /// round-robin:N, least-loaded:N, pool:N, elastic:N+M,
    /// take-or-create:N, partitioned:KxN; on http:// pipeline:NxD (N
    /// connections, D requests written ahead on each; pipeline:N is Nx16);
    /// library baselines deadpool:N, bb8:N (their generic pools over the
    /// same connector), and on mysql:// mysql-async:N (the MySQL client's own
    /// pool). A sized one without a size takes each --pool size. [default:
    /// pool; built-in: the first six]
    #[arg(short, long, value_delimiter = ',', value_parser = parse::strategy)]
    pub(crate) strategy: Vec<StrategySpec>,

    /// Closed-loop workers, one cell each. [default: 1,10,50,100]
    #[arg(short, long, value_delimiter = ',', value_parser = parse::concurrency)]
    pub(crate) concurrency: Vec<usize>,

    /// Pool sizes for strategies given without one. [default: 4,16]
    #[arg(long = "pool", value_delimiter = ',', value_parser = parse::pool_size)]
    pub(crate) pool_sizes: Vec<usize>,

    /// Measured time per cell (-z as oha has it). [default: 10s; built-in:
    /// 500ms, 3 runs]
    #[arg(short, long, short_alias = 'z', value_parser = parse::duration)]
    pub(crate) duration: Option<Duration>,

    /// Warm-up per cell, not measured; its connections are kept.
    /// [default: 2s; built-in: 250ms]
    #[arg(long, value_parser = parse::duration)]
    pub(crate) warmup: Option<Duration>,

    /// Measured requests per cell instead of a duration (the duration, if
    /// given, still caps the cell; otherwise the cap is 10 minutes).
    #[arg(short = 'n', long, value_parser = parse::count)]
    pub(crate) requests: Option<u64>,

    /// Load that changes within each cell, connections kept: the
    /// concurrency, or with --rate the rate (from the ramp's FROM, the
    /// warm-up included; --rate then only asks for the open loop).
    /// FROM..TO/DURATION, then any
    /// ,TO/DURATION stages (10..1000/30s, 4..16/4s,16/2s,4/3s). The report
    /// gives each second (req/s, p99, connections open, checkout wait) and
    /// where throughput stopped growing or p99 crossed --slo.
    #[arg(long, value_name = "RAMP", value_parser = parse::ramp,
          conflicts_with_all = ["concurrency", "duration", "batch", "requests"])]
    pub(crate) ramp: Option<poolbench_model::Ramp>,

    /// Open loop: requests per second, sent whatever the answers; latency
    /// counts from each request's intended send time.
    #[arg(long, value_parser = parse::rate, conflicts_with = "concurrency")]
    pub(crate) rate: Option<f64>,

    /// Open loop: gaps between requests.
    #[arg(long, value_enum, default_value_t = ArrivalArg::Constant, requires = "rate")]
    pub(crate) arrival: ArrivalArg,

    /// Open loop: most requests in flight at once.
    #[arg(long, default_value = "1000", value_parser = parse::concurrency, requires = "rate")]
    pub(crate) max_inflight: usize,

    /// Batch samples: time K requests at concurrency c as one sample.
    #[arg(long, value_name = "K", value_parser = parse::count, conflicts_with = "rate")]
    pub(crate) batch: Option<u64>,

    /// Batch samples: at least this many per cell, even past --duration.
    #[arg(long, default_value = "5", value_parser = parse::count, requires = "batch")]
    pub(crate) samples: u64,

    /// Run each cell this many times with fresh connections; throughput and
    /// p99 then come with 95% confidence intervals. [default: 1; the
    /// built-in server's default grid: 3 runs of 500 ms]
    #[arg(long, value_parser = parse::reps)]
    pub(crate) reps: Option<usize>,

    /// Each request holds a second connection from the same pool while it
    /// runs: the nested checkout that deadlocks pools smaller than c+1.
    #[arg(long)]
    pub(crate) nested: bool,

    /// Closed loop: each worker pauses this long between requests, as real
    /// clients do, its connection idle in the pool meanwhile: above the
    /// server's idle timeout it reproduces the idle-reuse race.
    #[arg(long, value_name = "DURATION", value_parser = parse::positive_duration,
          conflicts_with_all = ["rate", "batch"])]
    pub(crate) think_time: Option<Duration>,

    /// Run share I of N of every cell (I counts from 0, as Kubernetes'
    /// JOB_COMPLETION_INDEX): workers, pool sizes, rate, request count
    /// (-n) and batch size divided so that the N shards add up to the plan
    /// (the remainder goes to the lowest indexes, with a note). Each shard
    /// writes its whole result, stamped with the plan's hash; `poolbench
    /// merge` adds the shards of one plan exactly.
    #[arg(long, value_name = "I/N", value_parser = parse::shard,
          help_heading = "More than one machine")]
    pub(crate) shard: Option<poolbench_model::Shard>,

    /// Start the first cell's warm-up at this instant (RFC 3339, UTC:
    /// 2026-11-23T18:00:00Z), every later run (cell, repetition) one
    /// --slot after the one before: shards given the same time measure the
    /// same windows. A time already past is refused.
    #[arg(long, value_name = "TIME", value_parser = parse::start_at,
          help_heading = "More than one machine")]
    pub(crate) start_at: Option<String>,

    /// With --start-at: the time each run gets, from its warm-up to the
    /// next run's start. [default: warm-up + duration + 3s]
    #[arg(long, value_parser = parse::positive_duration, requires = "start_at",
          help_heading = "More than one machine")]
    pub(crate) slot: Option<std::time::Duration>,

    #[command(flatten)]
    pub(crate) request: crate::request_args::RequestArgs,

    /// Probe for a batching server: send D requests ahead on one HTTP/1.1
    /// connection and count responses per read.
    #[arg(long, value_name = "D", value_parser = parse::depth)]
    pub(crate) pipeline: Option<usize>,

    /// Per-request timeout, after checkout.
    #[arg(long, default_value = "5s", value_parser = parse::positive_duration)]
    pub(crate) timeout: Duration,

    /// Longest wait for a pooled connection before the request fails.
    #[arg(long, default_value = "5s", value_parser = parse::positive_duration)]
    pub(crate) checkout_timeout: Duration,

    /// Fail a checkout at once (error kind nested_checkout) when its task
    /// already holds a connection from the same pool and would wait;
    /// without it such waits are only counted.
    #[arg(long)]
    pub(crate) fail_on_nested: bool,

    /// Connections each pool opens before the warm-up.
    #[arg(long, default_value_t = 0)]
    pub(crate) min_idle: usize,

    /// Connect timeout.
    #[arg(long, default_value = "5s", value_parser = parse::positive_duration)]
    pub(crate) connect_timeout: Duration,

    /// Load-generator threads. [default: a closed loop of 5 s or more
    /// compares one thread with one per core on its largest cell first (2
    /// runs of 1 s each, about 6 s before the first cell) and keeps the
    /// count that carried more, said on stderr and in the result's
    /// `generator_threads`; else the number of cores] With postgres://
    /// (or redis:// over plain TCP) and a strategy that leases connections
    /// exclusively, closed-loop
    /// workers are dealt over this many threads with an I/O driver each
    /// (as pgbench -j); otherwise they share one multi-thread runtime. With
    /// --rate, each thread sends its share of the schedule, and the default
    /// is one thread per 100,000 req/s (at most the cores): a thread more
    /// than the rate needs only adds wake-ups between threads.
    #[arg(long, value_parser = parse::concurrency)]
    pub(crate) threads: Option<usize>,

    /// Service-level bounds, e.g. 'p99<50ms,errors<1%,throughput>5000'
    /// (also p50<D): the recommendation picks only among cells meeting
    /// them, each cell records what it broke, and the run exits 1 if no
    /// cell meets them.
    #[arg(long, value_name = "BOUNDS", value_parser = parse::slo)]
    pub(crate) slo: Option<poolbench_model::Slo>,

    /// With --slo: once two cells of a strategy in a row (by increasing
    /// -c) broke the SLO, its cells at higher concurrency are not run; the
    /// report and the JSON's `skipped` list each with the reason. Skipped
    /// cells are no failures: the run exits 1 only when no cell it ran met
    /// the SLO.
    #[arg(long)]
    pub(crate) stop_on_slo: bool,

    /// Also write the result to FILE, in the format its extension names
    /// (.json, .html, .csv, .md, .txt, .xml for JUnit); repeat to write
    /// several.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Vec<PathBuf>,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    #[command(flatten)]
    pub(crate) views: ViewArgs,

    #[command(flatten)]
    pub(crate) metrics: MetricsArgs,

    /// No progress bar.
    #[arg(short, long)]
    pub(crate) quiet: bool,

    /// Check the arguments and print the cells this process would run (a
    /// shard's share of each, its schedule), then exit: no server started,
    /// no connection made.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Built-in server only: response delay (50ms, uniform(10ms,30ms),
    /// lognormal(20ms,200ms)). [default: 1ms]
    #[arg(long, value_parser = parse::delay)]
    pub(crate) server_delay: Option<DelaySpec>,

    /// Built-in server only: requests processed at once; excess wait.
    #[arg(long, value_parser = parse::pool_size)]
    pub(crate) server_max_inflight: Option<usize>,

    /// Built-in server only: fraction of requests answered 500.
    #[arg(long, default_value = "0", value_parser = parse::fraction)]
    pub(crate) server_fail_rate: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ArrivalArg {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps.
    Poisson,
}

/// HDR views of each cell's latency.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ViewArgs {
    /// Text: print each cell's latency percentile spectrum (as wrk2
    /// --latency prints it: p50 … p99.999, then the detailed spectrum).
    #[arg(long)]
    pub(crate) latency: bool,

    /// Write one HdrHistogram interval log per cell into DIR (latency per
    /// second of the measured window, V2 compressed, as HdrHistogram's
    /// HistogramLogProcessor reads). `report` can write them again from a
    /// result saved by a run that asked for them.
    #[arg(long, value_name = "DIR")]
    pub(crate) hdr_log: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Tables for people.
    Text,
    /// The full result as JSON.
    Json,
    /// A self-contained HTML page with charts.
    Html,
    /// One row per cell.
    Csv,
    /// The tables of pool experiments, to paste.
    Markdown,
    /// JUnit XML for CI systems: a test case per SLO bound per cell (per
    /// `--fail-if` bound for compare, per expectation for a scenario).
    Junit,
}

impl From<crate::tune_args::TuneFormat> for Format {
    fn from(f: crate::tune_args::TuneFormat) -> Format {
        use crate::tune_args::TuneFormat;
        match f {
            TuneFormat::Text => Format::Text,
            TuneFormat::Json => Format::Json,
            TuneFormat::Html => Format::Html,
            TuneFormat::Markdown => Format::Markdown,
        }
    }
}
