//! How to set a pool of N in the clients people use: one line each, only
//! settings those libraries have; with the acquire and idle timeouts
//! where `tune` found them (`settings_with`, values from timeouts.rs).
use poolbench_model::{ClientSetting, Family, PoolTimeouts, Scheme};

/// What the search's answer means for each client of the target's
/// protocol (`scheme` as in the URL), for strategy `family` with `n`
/// connections.
pub fn settings(scheme: &str, family: &str, n: usize) -> Vec<ClientSetting> {
    settings_with(scheme, family, n, &PoolTimeouts::default())
}

/// [`settings`], with the timeouts `t` in each client's own setting.
pub fn settings_with(scheme: &str, family: &str, n: usize, t: &PoolTimeouts) -> Vec<ClientSetting> {
    let multiplexed = Family::of(family).is_some_and(Family::multiplexed);
    let t = Timeouts::of(t);
    let Some(protocol) = Scheme::of(scheme) else {
        return Vec::new();
    };
    match protocol {
        Scheme::Grpc | Scheme::Grpcs => grpc(n, multiplexed),
        Scheme::H2c => h2(n),
        Scheme::Https if multiplexed => h2(n),
        Scheme::Http | Scheme::Https => http1(n, &t),
        Scheme::Postgres => {
            let pgx = format!(
                "pool_max_conns={n}{} in the connection string{}",
                t.idle_s
                    .map(|s| format!("&pool_max_conn_idle_time={s}s&pool_max_conn_lifetime={s}s"))
                    .unwrap_or_default(),
                t.acquire_ms
                    .map(|ms| format!("; pool.Acquire under context.WithTimeout(ctx, {})", go(ms)))
                    .unwrap_or_default()
            );
            sql(n, "url", vec![one("pgx (pgxpool)", pgx)], &t)
        }
        Scheme::Mysql => sql(n, "\"mysql+pymysql://…\"", mysql(n, &t), &t),
        Scheme::Redis | Scheme::Rediss => redis(n, &t),
    }
}

/// A pipelining answer, `n` connections each with `d` requests written
/// ahead, in the HTTP/1.1 clients that pipeline.
pub fn pipelined(n: usize, d: usize) -> Vec<ClientSetting> {
    vec![
        one(
            "Erlang ibrowse",
            format!("[{{max_sessions, {n}}}, {{max_pipeline_size, {d}}}] in the request options"),
        ),
        one(
            "Node.js undici",
            format!("new Pool(origin, {{ connections: {n}, pipelining: {d} }})"),
        ),
    ]
}

/// The timeouts as the settings write them: ms and seconds.
struct Timeouts {
    acquire_ms: Option<u64>,
    idle_s: Option<f64>,
}

impl Timeouts {
    fn of(t: &PoolTimeouts) -> Timeouts {
        Timeouts {
            acquire_ms: t.acquire_ms.map(|ms| ms.ceil() as u64),
            idle_s: t.idle_s,
        }
    }

    fn idle_ms(&self) -> Option<u64> {
        self.idle_s.map(|s| (s * 1000.0).round() as u64)
    }
}

/// `f(v)` for a present value, else nothing.
fn p<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map(f).unwrap_or_default()
}

/// A Go duration (`2 * time.Second`, `250 * time.Millisecond`).
fn go(ms: u64) -> String {
    match ms % 1000 {
        0 => format!("{} * time.Second", ms / 1000),
        _ => format!("{ms} * time.Millisecond"),
    }
}

/// Seconds as Python writes them (`0.25`, `2.0`).
fn py(ms: u64) -> String {
    format!("{:?}", ms as f64 / 1000.0)
}

fn one(client: &str, setting: String) -> ClientSetting {
    ClientSetting {
        client: client.to_string(),
        setting,
    }
}

fn http1(n: usize, t: &Timeouts) -> Vec<ClientSetting> {
    let (idle, acq) = (t.idle_ms(), t.acquire_ms);
    vec![
        one("Go net/http", format!("&http.Transport{{MaxConnsPerHost: {n}, MaxIdleConnsPerHost: {n}{}}}", p(idle, |ms| format!(", IdleConnTimeout: {}", go(ms))))),
        one("Python httpx", format!("httpx.Limits(max_connections={n}, max_keepalive_connections={n}{}){}", p(idle, |ms| format!(", keepalive_expiry={}", py(ms))), p(acq, |ms| format!(", timeout=httpx.Timeout(5.0, pool={})", py(ms))))),
        one("Python aiohttp", format!("aiohttp.TCPConnector(limit={n}{}){}", p(idle, |ms| format!(", keepalive_timeout={}", py(ms))), p(acq, |ms| format!(", aiohttp.ClientTimeout(connect={}) (its connect includes the wait for a free connection)", py(ms))))),
        one("Erlang/Elixir hackney", format!(":hackney_pool.start_pool(:api, max_connections: {n}{}){}", p(idle, |ms| format!(", timeout: {ms}")), p(acq, |ms| format!(", checkout_timeout: {ms} per request")))),
        one("Elixir Finch", format!("pools: %{{default: [size: {n}, count: 1{}]}}{}", p(idle, |ms| format!(", conn_max_idle_time: {ms}")), p(acq, |ms| format!(", Finch.request(req, MyFinch, pool_timeout: {ms})")))),
        one("Rust reqwest / hyper-util", format!(".pool_max_idle_per_host({n}){} (caps idle connections only: cap requests in flight at {n} too, e.g. with a semaphore)", p(idle, |ms| format!(".pool_idle_timeout(Duration::from_millis({ms}))")))),
        one("Rust deadpool / bb8", rust_pools(n, t)),
    ]
}

/// deadpool's and bb8's own settings: both size; bb8 also times out
/// idle and old connections.
fn rust_pools(n: usize, t: &Timeouts) -> String {
    let (idle, acq) = (t.idle_ms(), t.acquire_ms);
    if idle.is_none() && acq.is_none() {
        return format!("max_size({n})");
    }
    format!(
        "max_size({n}){}; bb8: {}{}",
        p(acq, |ms| format!(
            "; deadpool: timeouts.wait = Some(Duration::from_millis({ms}))"
        )),
        p(acq, |ms| format!(
            ".connection_timeout(Duration::from_millis({ms}))"
        )),
        p(idle, |ms| {
            format!(".idle_timeout(Some(Duration::from_millis({ms}))).max_lifetime(Some(Duration::from_millis({ms})))")
        })
    )
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
fn mysql(n: usize, t: &Timeouts) -> Vec<ClientSetting> {
    vec![
        one(
            "Rust mysql_async",
            format!(
                "PoolOpts::new().with_constraints(PoolConstraints::new({n}, {n}).unwrap()){}",
                p(t.idle_ms(), |ms| format!(
                    ".with_inactive_connection_ttl(Duration::from_millis({ms}))"
                ))
            ),
        ),
        one(
            "Node mysql2",
            format!(
                "mysql.createPool({{connectionLimit: {n}{}}})",
                p(t.idle_ms(), |ms| format!(", idleTimeout: {ms}"))
            ),
        ),
    ]
}

/// HikariCP's least `maxLifetime` and `idleTimeout`, ms, and its least
/// `connectionTimeout`.
const HIKARI_LEAST_LIFETIME_MS: u64 = 30_000;
const HIKARI_LEAST_IDLE_MS: u64 = 10_000;
const HIKARI_LEAST_ACQUIRE_MS: u64 = 250;

fn hikari(n: usize, t: &Timeouts) -> String {
    let mut s = format!("maximumPoolSize={n} (minimumIdle={n} for a fixed pool)");
    if let Some(ms) = t.acquire_ms {
        s += &format!(", connectionTimeout={}", ms.max(HIKARI_LEAST_ACQUIRE_MS));
    }
    match t.idle_ms() {
        Some(ms) if ms >= HIKARI_LEAST_LIFETIME_MS => {
            s += &format!(", maxLifetime={ms}, idleTimeout={ms}");
        }
        Some(ms) if ms >= HIKARI_LEAST_IDLE_MS => {
            s += &format!(", idleTimeout={ms} (maxLifetime cannot go below {HIKARI_LEAST_LIFETIME_MS}: a fixed pool needs the server's idle close raised)");
        }
        Some(_) => {
            s += &format!(" (the server's idle close is below HikariCP's least maxLifetime, {HIKARI_LEAST_LIFETIME_MS} ms: raise it on the server)");
        }
        None => {}
    }
    s
}

/// The SQL clients' settings; `url` as SQLAlchemy's `create_engine`
/// takes it, `extra` the protocol's own clients (after the first two).
fn sql(n: usize, url: &str, extra: Vec<ClientSetting>, t: &Timeouts) -> Vec<ClientSetting> {
    let mut out = vec![
        one("Java HikariCP", hikari(n, t)),
        one(
            "Python SQLAlchemy",
            format!(
                "create_engine({url}, pool_size={n}, max_overflow=0{}{})",
                p(t.acquire_ms, |ms| format!(", pool_timeout={}", py(ms))),
                p(t.idle_s, |s| format!(
                    ", pool_recycle={}",
                    (s.floor() as u64).max(1)
                ))
            ),
        ),
        one(
            "Go database/sql",
            format!(
                "db.SetMaxOpenConns({n}); db.SetMaxIdleConns({n}){}",
                p(t.idle_ms(), |ms| format!(
                    "; db.SetConnMaxIdleTime({0}); db.SetConnMaxLifetime({0})",
                    go(ms)
                ))
            ),
        ),
        one("Rust deadpool / bb8", rust_pools(n, t)),
    ];
    for (i, setting) in extra.into_iter().enumerate() {
        out.insert(2 + i, setting);
    }
    out
}

fn redis(n: usize, t: &Timeouts) -> Vec<ClientSetting> {
    vec![
        one(
            "redis-py",
            format!(
                "redis.BlockingConnectionPool(max_connections={n}{}{})",
                p(t.acquire_ms, |ms| format!(", timeout={}", py(ms))),
                p(t.idle_s, |s| format!(
                    ", health_check_interval={} (a connection idle longer is checked before use)",
                    (s.floor() as u64).max(1)
                ))
            ),
        ),
        one(
            "Go go-redis",
            format!(
                "&redis.Options{{PoolSize: {n}{}{}}}",
                p(t.acquire_ms, |ms| format!(", PoolTimeout: {}", go(ms))),
                p(t.idle_ms(), |ms| format!(", ConnMaxIdleTime: {}", go(ms)))
            ),
        ),
        one("Rust deadpool-redis / bb8-redis", rust_pools(n, t)),
    ]
}

#[cfg(test)]
mod tests {
    use super::settings;

    #[test]
    fn a_mysql_answer_speaks_each_mysql_clients_words() {
        let all: String = settings("mysql", "pool", 6)
            .iter()
            .map(|s| format!("{}: {}\n", s.client, s.setting))
            .collect();
        for want in [
            "mysql+pymysql",
            "PoolConstraints::new(6, 6)",
            "HikariCP",
            "SetMaxOpenConns(6)",
        ] {
            assert!(all.contains(want), "{want} in {all}");
        }
        assert_eq!(settings("mariadb", "pool", 6), settings("mysql", "pool", 6));
    }
}
