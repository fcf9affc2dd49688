//! The clients' settings that keep an idle connection shorter than the
//! server does, by protocol: named in the `idle-reuse-race` finding, set
//! with values in `tune`'s answer.

use poolbench_model::Scheme;

/// The settings of the common clients of `scheme` that bound how long a
/// pooled connection idles (or lives), as one line.
pub fn names(scheme: &str) -> &'static str {
    let Some(protocol) = Scheme::of(scheme) else {
        return "the client pool's idle timeout";
    };
    match protocol {
        Scheme::Http | Scheme::Https | Scheme::H2c => {
            "Go IdleConnTimeout, httpx keepalive_expiry, aiohttp keepalive_timeout, reqwest pool_idle_timeout, hackney timeout"
        }
        Scheme::Grpc | Scheme::Grpcs => "grpc-go keepalive.ClientParameters or WithIdleTimeout",
        Scheme::Postgres => {
            "HikariCP idleTimeout and maxLifetime, SQLAlchemy pool_recycle, pgx MaxConnIdleTime and MaxConnLifetime, database/sql SetConnMaxIdleTime"
        }
        Scheme::Mysql => {
            "HikariCP idleTimeout and maxLifetime, SQLAlchemy pool_recycle, database/sql SetConnMaxIdleTime and SetConnMaxLifetime"
        }
        Scheme::Redis | Scheme::Rediss => {
            "go-redis ConnMaxIdleTime, redis-py health_check_interval"
        }
    }
}
