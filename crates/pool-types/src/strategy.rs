use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Requests written ahead on one connection by `pipeline:N` (no depth
/// given).
pub const DEFAULT_PIPELINE_DEPTH: usize = 16;

/// A strategy by name, as users write it: `per-request`, `shared`,
/// `round-robin:N`, `least-loaded:N`, `pool:N`, `elastic:N+M`,
/// `take-or-create:N`, `partitioned:KxN`, `pipeline:NxD`; and the library baselines
/// `deadpool:N`, `bb8:N`, and `mysql-async:N` (MySQL targets only).
///
/// Sized strategies may be written without a size (`pool`); the size is then
/// filled in later with [`StrategySpec::with_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
pub enum StrategySpec {
    /// Connect, one request, close.
    PerRequest,
    /// One connection for everything.
    Shared,
    /// N connections taken in turn: request i goes to connection i mod N,
    /// counting the caller's own turns if it keeps them
    /// (`Strategy::acquire_turn` in poolbench-pool).
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
    /// N HTTP/1.1 connections, each with up to D requests written ahead of
    /// their answers (answered in order); requests go to the connections
    /// in turn, as `round-robin:N`'s do. `pipeline:N` is `pipeline:Nx16`.
    Pipeline(Option<usize>, Option<usize>),
    /// The `deadpool` crate's managed pool of N, as a baseline. Runs only
    /// where a caller supplies that library (the engine does).
    Deadpool(Option<usize>),
    /// The `bb8` crate's pool of N, as a baseline (like `Deadpool`).
    Bb8(Option<usize>),
    /// The MySQL client's own pool (`mysql_async::Pool`, N connections at
    /// least and at most), as a baseline; `mysql://` targets only.
    MysqlAsync(Option<usize>),
}

impl StrategySpec {
    /// Most connections the strategy may open (`None`: no limit of its
    /// own, at most one per worker).
    pub fn connection_cap(&self) -> Option<usize> {
        match *self {
            StrategySpec::PerRequest | StrategySpec::TakeOrCreate(_) => None,
            StrategySpec::Shared => Some(1),
            StrategySpec::Elastic(n, m) => Some(n.unwrap_or(1) + m.unwrap_or(0)),
            other => other.size(),
        }
    }

    /// The name without a size.
    pub fn kind(&self) -> &'static str {
        match self {
            StrategySpec::PerRequest => "per-request",
            StrategySpec::Shared => "shared",
            StrategySpec::RoundRobin(_) => "round-robin",
            StrategySpec::LeastLoaded(_) => "least-loaded",
            StrategySpec::Pool(_) => "pool",
            StrategySpec::Elastic(..) => "elastic",
            StrategySpec::TakeOrCreate(_) => "take-or-create",
            StrategySpec::Partitioned(..) => "partitioned",
            StrategySpec::Pipeline(..) => "pipeline",
            StrategySpec::Deadpool(_) => "deadpool",
            StrategySpec::Bb8(_) => "bb8",
            StrategySpec::MysqlAsync(_) => "mysql-async",
        }
    }

    /// True for a pool library's strategy (`deadpool:N`, `bb8:N`,
    /// `mysql-async:N`), which `Strategy::new` (poolbench-pool) does not
    /// build.
    pub fn is_library(&self) -> bool {
        matches!(
            self,
            StrategySpec::Deadpool(_) | StrategySpec::Bb8(_) | StrategySpec::MysqlAsync(_)
        )
    }

    /// True for a strategy that is a protocol client's own pool
    /// (`mysql-async:N`): it runs only on that protocol's targets, given
    /// by their schemes.
    pub fn client_schemes(&self) -> Option<&'static [&'static str]> {
        match self {
            StrategySpec::MysqlAsync(_) => Some(&["mysql", "mariadb"]),
            _ => None,
        }
    }

    /// True for the strategies whose holders share connections (`shared`,
    /// `round-robin`, `least-loaded`, `pipeline`); the others lease each
    /// connection to one holder at a time.
    pub fn shares_connections(&self) -> bool {
        matches!(
            self,
            StrategySpec::Shared
                | StrategySpec::RoundRobin(_)
                | StrategySpec::LeastLoaded(_)
                | StrategySpec::Pipeline(..)
        )
    }

    /// Requests written ahead of their answers on one connection
    /// (`pipeline:NxD`: D), for a strategy that pipelines.
    pub fn pipeline_depth(&self) -> Option<usize> {
        match *self {
            StrategySpec::Pipeline(_, d) => Some(d.unwrap_or(DEFAULT_PIPELINE_DEPTH)),
            _ => None,
        }
    }

    /// True when the strategy takes a size and none was written.
    pub fn needs_size(&self) -> bool {
        matches!(
            self,
            StrategySpec::RoundRobin(None)
                | StrategySpec::LeastLoaded(None)
                | StrategySpec::Partitioned(None, _)
                | StrategySpec::Pipeline(None, _)
                | StrategySpec::Pool(None)
                | StrategySpec::Elastic(None, _)
                | StrategySpec::TakeOrCreate(None)
                | StrategySpec::Deadpool(None)
                | StrategySpec::Bb8(None)
                | StrategySpec::MysqlAsync(None)
        )
    }

    /// Fill in a missing size. `elastic` without sizes gets `N+N/2`;
    /// `partitioned` gets `2x(N/2)`: the same total as `pool:N` for even N,
    /// one less for odd N.
    pub fn with_size(self, n: usize) -> StrategySpec {
        match self {
            StrategySpec::RoundRobin(None) => StrategySpec::RoundRobin(Some(n)),
            StrategySpec::LeastLoaded(None) => StrategySpec::LeastLoaded(Some(n)),
            StrategySpec::Partitioned(None, _) => {
                let k = if n >= 2 { 2 } else { 1 };
                StrategySpec::Partitioned(Some(k), Some(n / k))
            }
            StrategySpec::Pool(None) => StrategySpec::Pool(Some(n)),
            StrategySpec::Pipeline(None, d) => {
                StrategySpec::Pipeline(Some(n), Some(d.unwrap_or(DEFAULT_PIPELINE_DEPTH)))
            }
            StrategySpec::Elastic(None, m) => {
                StrategySpec::Elastic(Some(n), Some(m.unwrap_or((n / 2).max(1))))
            }
            StrategySpec::TakeOrCreate(None) => StrategySpec::TakeOrCreate(Some(n)),
            StrategySpec::Deadpool(None) => StrategySpec::Deadpool(Some(n)),
            StrategySpec::Bb8(None) => StrategySpec::Bb8(Some(n)),
            StrategySpec::MysqlAsync(None) => StrategySpec::MysqlAsync(Some(n)),
            other => other,
        }
    }

    /// The pool size, where the strategy has one (for `partitioned:KxN`,
    /// K×N; for `elastic:N+M`, N).
    pub fn size(&self) -> Option<usize> {
        match *self {
            StrategySpec::PerRequest | StrategySpec::Shared => None,
            StrategySpec::Partitioned(k, n) => Some(k? * n?),
            StrategySpec::RoundRobin(n)
            | StrategySpec::Pipeline(n, _)
            | StrategySpec::LeastLoaded(n)
            | StrategySpec::Pool(n)
            | StrategySpec::Elastic(n, _)
            | StrategySpec::TakeOrCreate(n)
            | StrategySpec::Deadpool(n)
            | StrategySpec::Bb8(n)
            | StrategySpec::MysqlAsync(n) => n,
        }
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())?;
        match *self {
            StrategySpec::Elastic(Some(n), Some(m)) => write!(f, ":{n}+{m}"),
            StrategySpec::Elastic(Some(n), None) => write!(f, ":{n}"),
            StrategySpec::Partitioned(Some(k), Some(n)) => write!(f, ":{k}x{n}"),
            StrategySpec::Pipeline(Some(n), d) => {
                write!(f, ":{n}x{}", d.unwrap_or(DEFAULT_PIPELINE_DEPTH))
            }
            _ => match self.size() {
                Some(n) => write!(f, ":{n}"),
                None => Ok(()),
            },
        }
    }
}

impl FromStr for StrategySpec {
    type Err = SpecError;

    fn from_str(input: &str) -> Result<Self, SpecError> {
        let err = |reason: &str| SpecError {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let s = input.trim();
        let (name, arg) = match s.split_once(':') {
            Some((name, arg)) => (name, Some(arg.trim())),
            None => (s, None),
        };
        let size = |arg: &str| -> Result<usize, SpecError> {
            match arg.parse::<usize>() {
                Ok(0) => Err(err("size must be at least 1")),
                Ok(n) => Ok(n),
                Err(_) => Err(err("size must be a whole number")),
            }
        };
        let sized = |arg: Option<&str>| arg.map(size).transpose();
        let spec = match name {
            "per-request" | "shared" if arg.is_some() => return Err(err("takes no size")),
            "per-request" => StrategySpec::PerRequest,
            "shared" => StrategySpec::Shared,
            "round-robin" => StrategySpec::RoundRobin(sized(arg)?),
            "least-loaded" => StrategySpec::LeastLoaded(sized(arg)?),
            "partitioned" => match arg {
                None => StrategySpec::Partitioned(None, None),
                Some(arg) => match arg.split_once(['x', 'X']) {
                    Some((k, n)) => {
                        StrategySpec::Partitioned(Some(size(k.trim())?), Some(size(n.trim())?))
                    }
                    None => return Err(err("expected partitioned:KxN, e.g. partitioned:4x8")),
                },
            },
            "pool" => StrategySpec::Pool(sized(arg)?),
            "pipeline" => match arg.map(|a| a.split_once(['x', 'X'])) {
                None => StrategySpec::Pipeline(None, None),
                Some(Some((n, d))) => {
                    StrategySpec::Pipeline(Some(size(n.trim())?), Some(size(d.trim())?))
                }
                Some(None) => StrategySpec::Pipeline(sized(arg)?, Some(DEFAULT_PIPELINE_DEPTH)),
            },
            "take-or-create" => StrategySpec::TakeOrCreate(sized(arg)?),
            "deadpool" => StrategySpec::Deadpool(sized(arg)?),
            "bb8" => StrategySpec::Bb8(sized(arg)?),
            "mysql-async" => StrategySpec::MysqlAsync(sized(arg)?),
            "elastic" => match arg {
                None => StrategySpec::Elastic(None, None),
                Some(arg) => match arg.split_once('+') {
                    Some((n, m)) => match m.trim().parse::<usize>() {
                        Ok(m) => StrategySpec::Elastic(Some(size(n.trim())?), Some(m)),
                        Err(_) => return Err(err("overflow must be a whole number")),
                    },
                    None => StrategySpec::Elastic(None, None).with_size(size(arg)?),
                },
            },
            _ => {
                return Err(err(
                    "unknown strategy; expected per-request, shared, round-robin:N, \
                     least-loaded:N, pool:N, elastic:N+M, take-or-create:N, partitioned:KxN, pipeline:NxD, \
                     deadpool:N, bb8:N or mysql-async:N",
                ))
            }
        };
        Ok(spec)
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

/// A strategy name that could not be parsed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid strategy \"{input}\": {reason}")]
pub struct SpecError {
    pub(crate) input: String,
    pub(crate) reason: String,
}
