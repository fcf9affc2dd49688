//! How to set a pool of N in the clients people use: one line each, only
//! settings those libraries have.
use poolbench_model::ClientSetting;

/// What the search's answer means for each client of the target's
/// protocol (`scheme` as in the URL), for strategy `family` with `n`
/// connections.
pub fn settings(scheme: &str, family: &str, n: usize) -> Vec<ClientSetting> {
    let multiplexed = matches!(family, "shared" | "round-robin" | "least-loaded");
    match scheme {
        "grpc" | "grpcs" => grpc(n, multiplexed),
        "h2c" => h2(n),
        "https" if multiplexed => h2(n),
        "http" | "https" => http1(n),
        "postgres" | "postgresql" => sql(
            n,
            "url",
            vec![one(
                "pgx (pgxpool)",
                format!("pool_max_conns={n} in the connection string"),
            )],
        ),
        "mysql" | "mariadb" => sql(n, "\"mysql+pymysql://…\"", mysql(n)),
        "redis" | "rediss" => redis(n),
        _ => Vec::new(),
    }
}

fn one(client: &str, setting: String) -> ClientSetting {
    ClientSetting {
        client: client.to_string(),
        setting,
    }
}

fn http1(n: usize) -> Vec<ClientSetting> {
    vec![
        one("Go net/http", format!("&http.Transport{{MaxConnsPerHost: {n}, MaxIdleConnsPerHost: {n}}}")),
        one("Python httpx", format!("httpx.Limits(max_connections={n}, max_keepalive_connections={n})")),
        one("Python aiohttp", format!("aiohttp.TCPConnector(limit={n})")),
        one("Elixir hackney", format!(":hackney_pool.start_pool(:api, max_connections: {n})")),
        one("Elixir Finch", format!("pools: %{{default: [size: {n}, count: 1]}}")),
        one("Rust reqwest / hyper-util", format!(".pool_max_idle_per_host({n}) (caps idle connections only: cap requests in flight at {n} too, e.g. with a semaphore)")),
        one("Rust deadpool / bb8", format!("max_size({n})")),
    ]
}

fn h2(n: usize) -> Vec<ClientSetting> {
    vec![
        one(
            "Go net/http (HTTP/2)",
            format!(
                "&http.Transport{{MaxConnsPerHost: {n}}} (HTTP/2 multiplexes requests on each)"
            ),
        ),
        one(
            "Elixir Finch (HTTP/2)",
            format!("pools: %{{default: [protocols: [:http2], count: {n}]}}"),
        ),
        one(
            "Rust deadpool / bb8",
            format!("max_size({n}) over HTTP/2 connections, each shared by many requests"),
        ),
    ]
}

fn grpc(n: usize, multiplexed: bool) -> Vec<ClientSetting> {
    let conns = match n {
        1 => "one grpc.ClientConn shared by every goroutine".to_string(),
        n => format!("{n} grpc.ClientConn, calls spread over them in turn"),
    };
    let mut out = vec![one("grpc-go", conns)];
    if multiplexed {
        out.push(one(
            "Elixir Finch (HTTP/2)",
            format!("pools: %{{default: [protocols: [:http2], count: {n}]}}"),
        ));
    } else {
        out.push(one(
            "Rust deadpool / bb8",
            format!("max_size({n}) over gRPC channels"),
        ));
    }
    out
}

/// The MySQL clients beside the SQL ones every database has.
fn mysql(n: usize) -> Vec<ClientSetting> {
    vec![
        one(
            "Rust mysql_async",
            format!("PoolOpts::new().with_constraints(PoolConstraints::new({n}, {n}).unwrap())"),
        ),
        one(
            "Node mysql2",
            format!("mysql.createPool({{connectionLimit: {n}}})"),
        ),
    ]
}

/// The SQL clients' settings; `url` as SQLAlchemy's `create_engine`
/// takes it, `extra` the protocol's own clients (after the first two).
fn sql(n: usize, url: &str, extra: Vec<ClientSetting>) -> Vec<ClientSetting> {
    let mut out = vec![
        one(
            "Java HikariCP",
            format!("maximumPoolSize={n} (minimumIdle={n} for a fixed pool)"),
        ),
        one(
            "Python SQLAlchemy",
            format!("create_engine({url}, pool_size={n}, max_overflow=0)"),
        ),
        one(
            "Go database/sql",
            format!("db.SetMaxOpenConns({n}); db.SetMaxIdleConns({n})"),
        ),
        one("Rust deadpool / bb8", format!("max_size({n})")),
    ];
    for (i, setting) in extra.into_iter().enumerate() {
        out.insert(2 + i, setting);
    }
    out
}

fn redis(n: usize) -> Vec<ClientSetting> {
    vec![
        one(
            "redis-py",
            format!("redis.BlockingConnectionPool(max_connections={n})"),
        ),
        one("Go go-redis", format!("&redis.Options{{PoolSize: {n}}}")),
        one("Rust deadpool-redis / bb8-redis", format!("max_size({n})")),
    ]
}
