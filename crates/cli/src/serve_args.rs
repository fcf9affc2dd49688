//! `poolbench serve`'s arguments: the built-in target's listeners,
//! delay, limits and faults, and `--check-client`.
use crate::metrics_args::MetricsArgs;
use crate::parse;
use clap::Args;
use poolbench_server::DelaySpec;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,

    /// Response delay: a duration (50ms), uniform(10ms,30ms), or
    /// lognormal(20ms,200ms) meaning median and p99.
    #[arg(long, default_value = "0", value_parser = parse::delay)]
    pub(crate) delay: DelaySpec,

    /// Busy CPU work per request, e.g. 200us.
    #[arg(long, default_value = "0s", value_parser = parse::duration)]
    pub(crate) cpu: Duration,

    /// Response body size in bytes.
    #[arg(long, default_value_t = 13)]
    pub(crate) body_size: usize,

    /// Requests processed at once; excess requests wait.
    #[arg(long, value_parser = parse::pool_size)]
    pub(crate) max_inflight: Option<usize>,

    /// Close keep-alive connections idle this long.
    #[arg(long, alias = "keep-alive-timeout", default_value = "60s", value_parser = parse::duration)]
    pub(crate) keepalive_timeout: Duration,

    /// Close a connection after this many requests.
    #[arg(long, value_parser = parse::count)]
    pub(crate) max_requests_per_conn: Option<u64>,

    /// Fraction of requests answered 500.
    #[arg(long, default_value = "0", value_parser = parse::fraction)]
    pub(crate) fail_rate: f64,

    /// Freeze the whole server this long at the start of every
    /// --stall-every period (no response leaves during a stall).
    #[arg(long, default_value = "0s", value_parser = parse::duration)]
    pub(crate) stall: Duration,

    /// The period of --stall.
    #[arg(long, default_value = "5s", value_parser = parse::duration)]
    pub(crate) stall_every: Duration,

    /// Answer pipelined HTTP/1.1 requests in one write (a batching server).
    #[arg(long)]
    pub(crate) batching: bool,

    /// Also listen for TLS here (HTTP/1.1 or HTTP/2 by ALPN, and the gRPC
    /// Greeter); a self-signed certificate is generated at start.
    #[arg(long)]
    pub(crate) tls_listen: Option<SocketAddr>,

    /// PEM certificate chain for --tls-listen instead of a self-signed one.
    #[arg(long, requires_all = ["key", "tls_listen"])]
    pub(crate) cert: Option<PathBuf>,

    /// PEM private key of --cert.
    #[arg(long, requires = "cert")]
    pub(crate) key: Option<PathBuf>,

    /// Also listen for gRPC here: the helloworld.Greeter (h2c), honouring
    /// --delay, --cpu, --fail-rate (status INTERNAL) and --stall.
    #[arg(long)]
    pub(crate) grpc_listen: Option<SocketAddr>,

    /// HTTP/2 streams a client may open at once on one connection.
    /// [default: 200]
    #[arg(long, alias = "max-streams", value_parser = parse::streams)]
    pub(crate) max_concurrent_streams: Option<u32>,

    /// The HTTP listener speaks only HTTP/1.1 (no h2c).
    #[arg(long)]
    pub(crate) http1_only: bool,

    /// Server runtime threads. [default: number of cores]
    #[arg(long, value_parser = parse::concurrency)]
    pub(crate) threads: Option<usize>,

    /// Service mode: serve GET /authors/{id} from this PostgreSQL or MySQL
    /// database (postgres://user:password@host:port/db,
    /// mysql://user:password@host:port/db), through this project's pool.
    #[arg(long)]
    pub(crate) db: Option<String>,

    /// Connections the database pool keeps.
    #[arg(long, default_value_t = 5, value_parser = parse::pool_size, requires = "db")]
    pub(crate) db_pool: usize,

    /// Extra database connections opened under load, closed when idle.
    #[arg(long, default_value_t = 10, requires = "db")]
    pub(crate) db_overflow: usize,

    /// Longest wait for a database connection; then the request fails 503.
    #[arg(long, default_value = "30s", value_parser = parse::duration, requires = "db")]
    pub(crate) db_timeout: Duration,

    /// Extra time each query takes on the database side (pg_sleep, MySQL's
    /// SLEEP).
    #[arg(long, default_value = "0s", value_parser = parse::duration, requires = "db")]
    pub(crate) db_delay: Duration,

    /// Redis read-through cache for /authors (redis://host:port/).
    #[arg(long, requires = "db")]
    pub(crate) cache: Option<String>,

    /// The handler takes a second database connection while holding the
    /// first (the nested checkout that starves a small pool).
    #[arg(long, requires = "db")]
    pub(crate) nested: bool,

    #[command(flatten)]
    pub(crate) metrics: MetricsArgs,

    #[command(flatten)]
    pub(crate) check: crate::check_args::CheckArgs,
}
