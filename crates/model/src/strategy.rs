//! A strategy by name, as users write it: every strategy the pool runs
//! ([`PoolSpec`]: `per-request`, `shared`, `round-robin:N`,
//! `least-loaded:N`, `pool:N`, `elastic:N+M`, `take-or-create:N`,
//! `partitioned:KxN`, `pipeline:NxD`), and the library baselines the
//! engine and the targets run beside it: `deadpool:N`, `bb8:N`, and
//! `mysql-async:N` (MySQL targets only). The pool's own API takes only a
//! `PoolSpec` ([`StrategySpec::pool`]), so it never sees a strategy it
//! cannot run.
use poolbench_pool_types::{PoolSpec, SpecError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Sized strategies may be written without a size (`pool`); the size is then
/// filled in later with [`StrategySpec::with_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
pub enum StrategySpec {
    /// Connect, one request, close.
    PerRequest,
    /// One connection for everything.
    Shared,
    /// N connections taken in turn (request i on connection i mod N).
    RoundRobin(Option<usize>),
    /// N connections; each request goes to the one with fewest in flight.
    LeastLoaded(Option<usize>),
    /// Exclusive checkout of at most N connections, FIFO waiters.
    Pool(Option<usize>),
    /// `pool:N` plus up to M overflow connections closed after an idle grace.
    Elastic(Option<usize>, Option<usize>),
    /// Take an idle connection or open one; keep at most N idle.
    TakeOrCreate(Option<usize>),
    /// K independent `pool:N`s; requests spread over them by a key.
    Partitioned(Option<usize>, Option<usize>),
    /// N HTTP/1.1 connections, each with up to D requests written ahead.
    Pipeline(Option<usize>, Option<usize>),
    /// The `deadpool` crate's managed pool of N, as a baseline (the
    /// engine's checkout runs it).
    Deadpool(Option<usize>),
    /// The `bb8` crate's pool of N, as a baseline (like `Deadpool`).
    Bb8(Option<usize>),
    /// The MySQL client's own pool (`mysql_async::Pool`, N connections at
    /// least and at most), as a baseline; `mysql://` targets only (the
    /// target's `client_pool` runs it).
    MysqlAsync(Option<usize>),
}

impl From<PoolSpec> for StrategySpec {
    fn from(p: PoolSpec) -> StrategySpec {
        match p {
            PoolSpec::PerRequest => StrategySpec::PerRequest,
            PoolSpec::Shared => StrategySpec::Shared,
            PoolSpec::RoundRobin(n) => StrategySpec::RoundRobin(n),
            PoolSpec::LeastLoaded(n) => StrategySpec::LeastLoaded(n),
            PoolSpec::Pool(n) => StrategySpec::Pool(n),
            PoolSpec::Elastic(n, m) => StrategySpec::Elastic(n, m),
            PoolSpec::TakeOrCreate(n) => StrategySpec::TakeOrCreate(n),
            PoolSpec::Partitioned(k, n) => StrategySpec::Partitioned(k, n),
            PoolSpec::Pipeline(n, d) => StrategySpec::Pipeline(n, d),
        }
    }
}

/// A pool library run as a baseline beside the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    Deadpool,
    Bb8,
    MysqlAsync,
}

impl Library {
    /// Its name in a strategy (`bb8:8`).
    pub fn name(self) -> &'static str {
        match self {
            Library::Deadpool => "deadpool",
            Library::Bb8 => "bb8",
            Library::MysqlAsync => "mysql-async",
        }
    }
}

/// Who runs a strategy: the pool, or a library beside it (with its size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunBy {
    Pool(PoolSpec),
    Library(Library, Option<usize>),
}

impl StrategySpec {
    /// Who runs it.
    pub fn run_by(&self) -> RunBy {
        RunBy::Pool(match *self {
            StrategySpec::PerRequest => PoolSpec::PerRequest,
            StrategySpec::Shared => PoolSpec::Shared,
            StrategySpec::RoundRobin(n) => PoolSpec::RoundRobin(n),
            StrategySpec::LeastLoaded(n) => PoolSpec::LeastLoaded(n),
            StrategySpec::Pool(n) => PoolSpec::Pool(n),
            StrategySpec::Elastic(n, m) => PoolSpec::Elastic(n, m),
            StrategySpec::TakeOrCreate(n) => PoolSpec::TakeOrCreate(n),
            StrategySpec::Partitioned(k, n) => PoolSpec::Partitioned(k, n),
            StrategySpec::Pipeline(n, d) => PoolSpec::Pipeline(n, d),
            StrategySpec::Deadpool(n) => return RunBy::Library(Library::Deadpool, n),
            StrategySpec::Bb8(n) => return RunBy::Library(Library::Bb8, n),
            StrategySpec::MysqlAsync(n) => return RunBy::Library(Library::MysqlAsync, n),
        })
    }

    /// The strategy as the pool runs it; `None` for a library baseline.
    pub fn pool(&self) -> Option<PoolSpec> {
        match self.run_by() {
            RunBy::Pool(p) => Some(p),
            RunBy::Library(..) => None,
        }
    }

    /// Most connections the strategy may open (`None`: no limit of its
    /// own, at most one per worker).
    pub fn connection_cap(&self) -> Option<usize> {
        self.pool().map_or(self.size(), |p| p.connection_cap())
    }

    /// The name without a size.
    pub fn kind(&self) -> &'static str {
        match self.run_by() {
            RunBy::Pool(p) => p.kind(),
            RunBy::Library(l, _) => l.name(),
        }
    }

    /// True for a pool library's strategy (`deadpool:N`, `bb8:N`,
    /// `mysql-async:N`), which the pool does not run.
    pub fn is_library(&self) -> bool {
        self.pool().is_none()
    }

    /// The protocol whose targets a protocol client's own pool
    /// (`mysql-async:N`) runs on.
    pub fn client_protocol(&self) -> Option<crate::Scheme> {
        match self {
            StrategySpec::MysqlAsync(_) => Some(crate::Scheme::Mysql),
            _ => None,
        }
    }

    /// True for the strategies whose holders share connections (`shared`,
    /// `round-robin`, `least-loaded`, `pipeline`).
    pub fn shares_connections(&self) -> bool {
        self.pool().is_some_and(|p| p.shares_connections())
    }

    /// Requests written ahead of their answers on one connection
    /// (`pipeline:NxD`: D), for a strategy that pipelines.
    pub fn pipeline_depth(&self) -> Option<usize> {
        self.pool().and_then(|p| p.pipeline_depth())
    }

    /// True when the strategy takes a size and none was written.
    pub fn needs_size(&self) -> bool {
        match self.run_by() {
            RunBy::Pool(p) => p.needs_size(),
            RunBy::Library(_, n) => n.is_none(),
        }
    }

    /// Fill in a missing size (as [`PoolSpec::with_size`] for the pool's).
    pub fn with_size(self, n: usize) -> StrategySpec {
        match self.run_by() {
            RunBy::Pool(p) => p.with_size(n).into(),
            RunBy::Library(l, None) => match l {
                Library::Deadpool => StrategySpec::Deadpool(Some(n)),
                Library::Bb8 => StrategySpec::Bb8(Some(n)),
                Library::MysqlAsync => StrategySpec::MysqlAsync(Some(n)),
            },
            RunBy::Library(_, Some(_)) => self,
        }
    }

    /// The pool size, where the strategy has one (for `partitioned:KxN`,
    /// K×N; for `elastic:N+M`, N).
    pub fn size(&self) -> Option<usize> {
        match self.run_by() {
            RunBy::Pool(p) => p.size(),
            RunBy::Library(_, n) => n,
        }
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.run_by() {
            RunBy::Pool(p) => p.fmt(f),
            RunBy::Library(l, Some(n)) => write!(f, "{}:{n}", l.name()),
            RunBy::Library(l, None) => f.write_str(l.name()),
        }
    }
}

impl FromStr for StrategySpec {
    type Err = SpecError;

    fn from_str(input: &str) -> Result<Self, SpecError> {
        let s = input.trim();
        let (name, arg) = match s.split_once(':') {
            Some((name, arg)) => (name, Some(arg.trim())),
            None => (s, None),
        };
        let library: fn(Option<usize>) -> StrategySpec = match name {
            "deadpool" => StrategySpec::Deadpool,
            "bb8" => StrategySpec::Bb8,
            "mysql-async" => StrategySpec::MysqlAsync,
            _ if PoolSpec::NAMES.contains(&name) => return PoolSpec::from_str(input).map(Into::into),
            _ => {
                return Err(SpecError::new(
                    input,
                    "unknown strategy; expected per-request, shared, round-robin:N, \
                     least-loaded:N, pool:N, elastic:N+M, take-or-create:N, partitioned:KxN, pipeline:NxD, \
                     deadpool:N, bb8:N or mysql-async:N",
                ))
            }
        };
        let size = match arg.map(str::parse::<usize>) {
            None => None,
            Some(Ok(0)) => return Err(SpecError::new(input, "size must be at least 1")),
            Some(Ok(n)) => Some(n),
            Some(Err(_)) => return Err(SpecError::new(input, "size must be a whole number")),
        };
        Ok(library(size))
    }
}

impl TryFrom<String> for StrategySpec {
    type Error = SpecError;
    fn try_from(s: String) -> Result<Self, SpecError> {
        s.parse()
    }
}

impl From<StrategySpec> for String {
    fn from(s: StrategySpec) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_written() {
        for name in [
            "per-request",
            "shared",
            "round-robin:4",
            "least-loaded:4",
            "pool:8",
            "elastic:4+2",
            "take-or-create:3",
            "partitioned:2x4",
            "pipeline:2x16",
            "deadpool:8",
            "bb8:8",
            "mysql-async:8",
        ] {
            let spec: StrategySpec = name.parse().unwrap();
            assert_eq!(spec.to_string(), name);
            assert_eq!(spec.pool().is_none(), spec.is_library(), "{name}");
        }
    }

    #[test]
    fn a_library_baseline_is_not_the_pool_s_and_takes_a_size() {
        let spec: StrategySpec = "bb8".parse().unwrap();
        assert!(spec.needs_size() && spec.pool().is_none());
        assert_eq!(spec.with_size(5), StrategySpec::Bb8(Some(5)));
        assert_eq!(spec.with_size(5).connection_cap(), Some(5));
        assert!("bb8:0".parse::<StrategySpec>().is_err());
        assert!("pool:x".parse::<StrategySpec>().is_err());
        let unknown = "pol:4".parse::<StrategySpec>().unwrap_err().to_string();
        assert!(unknown.contains("mysql-async:N"), "{unknown}");
        assert!("deadpool:4".parse::<PoolSpec>().is_err());
    }
}
