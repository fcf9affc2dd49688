//! The client libraries `serve --check-client --client LIB` knows: their
//! default limits, and the setting that changes what a finding names.
//! Only settings those libraries have.

/// One library.
pub struct ClientLib {
    /// As `--client` names it.
    pub key: &'static str,
    pub name: &'static str,
    /// Requests it lets in flight to one host unless told (`None`: no limit).
    pub default_cap: Option<u64>,
    /// Keeping `n` connections alive between requests.
    pub keep_alive: fn(u64) -> String,
    /// Raising its limit to `n`.
    pub cap: fn(u64) -> String,
    /// Closing idle connections after `ms` milliseconds.
    pub idle: fn(u64) -> String,
    /// Spreading HTTP/2 requests over `n` connections.
    pub spread: fn(u64) -> String,
}

/// Every library known, by key.
pub const CLIENT_LIBS: &[ClientLib] = &[
    ClientLib {
        key: "go",
        name: "Go net/http",
        default_cap: None,
        keep_alive: |n| {
            format!("&http.Transport{{MaxIdleConnsPerHost: {n}}} (the default keeps 2 idle per host and closes the rest after each request)")
        },
        cap: |n| format!("&http.Transport{{MaxConnsPerHost: {n}}}"),
        idle: |ms| format!("&http.Transport{{IdleConnTimeout: {ms} * time.Millisecond}}"),
        spread: |_| {
            "golang.org/x/net/http2.Transport{StrictMaxConcurrentStreams: false} (the default) opens another connection when the streams run out; with true it waits".into()
        },
    },
    ClientLib {
        key: "grpc-go",
        name: "grpc-go",
        default_cap: None,
        keep_alive: |_| "one grpc.ClientConn for the process, not one per call".into(),
        cap: |n| format!("at most {n} calls at once (a semaphore around the calls)"),
        idle: |ms| {
            format!("grpc.WithKeepaliveParams(keepalive.ClientParameters{{Time: {ms} * time.Millisecond}}) so the channel notices a closed connection")
        },
        spread: |n| {
            format!("{n} grpc.ClientConn, calls round-robin across them (one ClientConn is one HTTP/2 connection)")
        },
    },
    ClientLib {
        key: "grpcio",
        name: "Python grpcio",
        default_cap: None,
        keep_alive: |_| "one grpc.Channel for the process, not one per call".into(),
        cap: |n| format!("at most {n} calls at once (a semaphore around the calls)"),
        idle: |ms| format!("options=[('grpc.keepalive_time_ms', {ms})] on the channel"),
        spread: |n| {
            format!("{n} grpc.insecure_channel(..., options=[('grpc.use_local_subchannel_pool', 1)]), calls round-robin across them (channels to one target share a connection unless told)")
        },
    },
    ClientLib {
        key: "requests",
        name: "Python requests",
        default_cap: None,
        keep_alive: |n| {
            format!("one requests.Session, with session.mount('http://', HTTPAdapter(pool_maxsize={n})) (the default keeps 10 per host and discards the rest)")
        },
        cap: |n| format!("HTTPAdapter(pool_maxsize={n}, pool_block=True)"),
        idle: |_| {
            "requests has no idle timeout: HTTPAdapter(max_retries=Retry(total=1)) retries a request that met a closed connection".into()
        },
        spread: |_| "requests speaks HTTP/1.1 only".into(),
    },
    ClientLib {
        key: "httpx",
        name: "Python httpx",
        default_cap: Some(100),
        keep_alive: |n| {
            format!("one httpx.Client, httpx.Limits(max_keepalive_connections={n}) (the default keeps 20)")
        },
        cap: |n| format!("httpx.Limits(max_connections={n}) (the default is 100)"),
        idle: |ms| {
            format!(
                "httpx.Limits(keepalive_expiry={:.1}) (seconds; the default is 5)",
                ms as f64 / 1000.0
            )
        },
        spread: |n| {
            format!(
                "httpx.Client(http2=True) holds one connection per host: {n} clients, round-robin"
            )
        },
    },
    ClientLib {
        key: "aiohttp",
        name: "Python aiohttp",
        default_cap: Some(100),
        keep_alive: |n| {
            format!("one ClientSession for the process, aiohttp.TCPConnector(limit={n})")
        },
        cap: |n| format!("aiohttp.TCPConnector(limit={n}) (the default is 100; 0 is no limit)"),
        idle: |ms| {
            format!(
                "aiohttp.TCPConnector(keepalive_timeout={:.1}) (seconds; the default is 15)",
                ms as f64 / 1000.0
            )
        },
        spread: |_| "aiohttp speaks HTTP/1.1 only".into(),
    },
    ClientLib {
        key: "curl",
        name: "curl",
        default_cap: Some(50),
        keep_alive: |_| {
            "one curl for many URLs (curl URL URL …, or a config file): a curl per request is a connection per request".into()
        },
        cap: |n| format!("curl --parallel --parallel-max {n} (the default is 50)"),
        idle: |_| "curl keeps a connection only while it runs".into(),
        spread: |_| {
            "curl --parallel multiplexes on one HTTP/2 connection; --parallel-max caps it".into()
        },
    },
    ClientLib {
        key: "poolbench",
        name: "poolbench run",
        default_cap: None,
        keep_alive: |n| format!("-s pool:{n}"),
        cap: |n| format!("-c {n} -s pool:{n}"),
        idle: |ms| format!("--idle-timeout {ms}ms"),
        spread: |n| format!("-s round-robin:{n}"),
    },
    ClientLib {
        key: "hackney",
        name: "Erlang/Elixir hackney",
        default_cap: Some(50),
        keep_alive: |n| {
            format!(
                ":hackney_pool.start_pool(:api, max_connections: {n}), pool: :api on each request"
            )
        },
        cap: |n| {
            format!(
                ":hackney_pool.start_pool(:api, max_connections: {n}) (the default pool holds 50)"
            )
        },
        idle: |ms| {
            format!(
                ":hackney_pool.start_pool(:api, timeout: {ms}) (idle ms; the default is 150000)"
            )
        },
        spread: |_| "hackney speaks HTTP/1.1 only".into(),
    },
    ClientLib {
        key: "finch",
        name: "Elixir Finch",
        default_cap: Some(50),
        keep_alive: |n| format!("pools: %{{default: [size: {n}]}}"),
        cap: |n| format!("pools: %{{default: [size: {n}]}} (the default size is 50)"),
        idle: |ms| format!("pools: %{{default: [pool_max_idle_time: {ms}]}}"),
        spread: |n| format!("pools: %{{default: [protocols: [:http2], count: {n}]}}"),
    },
    ClientLib {
        key: "okhttp",
        name: "OkHttp",
        default_cap: Some(5),
        keep_alive: |n| {
            format!("ConnectionPool({n}, 5, TimeUnit.MINUTES) (the default keeps 5 idle)")
        },
        cap: |n| format!("dispatcher.maxRequestsPerHost = {n} (the default is 5)"),
        idle: |ms| format!("ConnectionPool(5, {ms}, TimeUnit.MILLISECONDS)"),
        spread: |_| {
            "OkHttp opens another HTTP/2 connection only when the first is refused; use several OkHttpClient instances".into()
        },
    },
    ClientLib {
        key: "reqwest",
        name: "Rust reqwest",
        default_cap: None,
        keep_alive: |n| format!("one reqwest::Client, .pool_max_idle_per_host({n})"),
        cap: |n| format!("at most {n} requests at once (a tokio Semaphore): reqwest has no cap"),
        idle: |ms| format!(".pool_idle_timeout(Duration::from_millis({ms})) (the default is 90 s)"),
        spread: |n| format!("{n} reqwest::Client with .http2_prior_knowledge(), round-robin"),
    },
];

/// The library `key` names.
pub fn client_lib(key: &str) -> Option<&'static ClientLib> {
    CLIENT_LIBS.iter().find(|l| l.key == key)
}

/// Every key, for an error message.
pub fn client_keys() -> String {
    CLIENT_LIBS
        .iter()
        .map(|l| l.key)
        .collect::<Vec<_>>()
        .join(", ")
}
