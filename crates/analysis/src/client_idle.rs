//! The clients' settings that keep an idle connection shorter than the
//! server does, by protocol: named in the `idle-reuse-race` finding, set
//! with values in `tune`'s answer.

/// The settings of the common clients of `scheme` that bound how long a
/// pooled connection idles (or lives), as one line.
pub fn names(scheme: &str) -> &'static str {
    match scheme {
        "http" | "https" | "h2c" => {
            "Go IdleConnTimeout, httpx keepalive_expiry, aiohttp keepalive_timeout, reqwest pool_idle_timeout, hackney timeout"
        }
        "grpc" | "grpcs" => "grpc-go keepalive.ClientParameters or WithIdleTimeout",
        "postgres" | "postgresql" => {
            "HikariCP idleTimeout and maxLifetime, SQLAlchemy pool_recycle, pgx MaxConnIdleTime and MaxConnLifetime, database/sql SetConnMaxIdleTime"
        }
        "mysql" | "mariadb" => {
            "HikariCP idleTimeout and maxLifetime, SQLAlchemy pool_recycle, database/sql SetConnMaxIdleTime and SetConnMaxLifetime"
        }
        "redis" | "rediss" => "go-redis ConnMaxIdleTime, redis-py health_check_interval",
        _ => "the client pool's idle timeout",
    }
}
