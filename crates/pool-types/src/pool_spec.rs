use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Requests written ahead on one connection by `pipeline:N` (no depth
/// given).
pub const DEFAULT_PIPELINE_DEPTH: usize = 16;

/// A strategy the pool runs, by name: `per-request`, `shared`,
/// `round-robin:N`, `least-loaded:N`, `pool:N`, `elastic:N+M`,
/// `take-or-create:N`, `partitioned:KxN`, `pipeline:NxD`. (The library
/// baselines a benchmark runs beside it, `deadpool:N`, `bb8:N` and
/// `mysql-async:N`, are not the pool's: poolbench's model names them.)
///
/// Sized strategies may be written without a size (`pool`); the size is then
/// filled in later with [`PoolSpec::with_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
pub enum PoolSpec {
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
}

impl PoolSpec {
    /// The names the pool runs, as written before a `:`.
    pub const NAMES: [&'static str; 9] = [
        "per-request",
        "shared",
        "round-robin",
        "least-loaded",
        "pool",
        "elastic",
        "take-or-create",
        "partitioned",
        "pipeline",
    ];

    /// Most connections the strategy may open (`None`: no limit of its
    /// own, at most one per worker).
    pub fn connection_cap(&self) -> Option<usize> {
        match *self {
            PoolSpec::PerRequest | PoolSpec::TakeOrCreate(_) => None,
            PoolSpec::Shared => Some(1),
            PoolSpec::Elastic(n, m) => Some(n.unwrap_or(1) + m.unwrap_or(0)),
            other => other.size(),
        }
    }

    /// The name without a size.
    pub fn kind(&self) -> &'static str {
        match self {
            PoolSpec::PerRequest => "per-request",
            PoolSpec::Shared => "shared",
            PoolSpec::RoundRobin(_) => "round-robin",
            PoolSpec::LeastLoaded(_) => "least-loaded",
            PoolSpec::Pool(_) => "pool",
            PoolSpec::Elastic(..) => "elastic",
            PoolSpec::TakeOrCreate(_) => "take-or-create",
            PoolSpec::Partitioned(..) => "partitioned",
            PoolSpec::Pipeline(..) => "pipeline",
        }
    }

    /// True for the strategies whose holders share connections (`shared`,
    /// `round-robin`, `least-loaded`, `pipeline`); the others lease each
    /// connection to one holder at a time.
    pub fn shares_connections(&self) -> bool {
        matches!(
            self,
            PoolSpec::Shared
                | PoolSpec::RoundRobin(_)
                | PoolSpec::LeastLoaded(_)
                | PoolSpec::Pipeline(..)
        )
    }

    /// Requests written ahead of their answers on one connection
    /// (`pipeline:NxD`: D), for a strategy that pipelines.
    pub fn pipeline_depth(&self) -> Option<usize> {
        match *self {
            PoolSpec::Pipeline(_, d) => Some(d.unwrap_or(DEFAULT_PIPELINE_DEPTH)),
            _ => None,
        }
    }

    /// True when the strategy takes a size and none was written.
    pub fn needs_size(&self) -> bool {
        matches!(
            self,
            PoolSpec::RoundRobin(None)
                | PoolSpec::LeastLoaded(None)
                | PoolSpec::Partitioned(None, _)
                | PoolSpec::Pipeline(None, _)
                | PoolSpec::Pool(None)
                | PoolSpec::Elastic(None, _)
                | PoolSpec::TakeOrCreate(None)
        )
    }

    /// Fill in a missing size. `elastic` without sizes gets `N+N/2`;
    /// `partitioned` gets `2x(N/2)`: the same total as `pool:N` for even N,
    /// one less for odd N.
    pub fn with_size(self, n: usize) -> PoolSpec {
        match self {
            PoolSpec::RoundRobin(None) => PoolSpec::RoundRobin(Some(n)),
            PoolSpec::LeastLoaded(None) => PoolSpec::LeastLoaded(Some(n)),
            PoolSpec::Partitioned(None, _) => {
                let k = if n >= 2 { 2 } else { 1 };
                PoolSpec::Partitioned(Some(k), Some(n / k))
            }
            PoolSpec::Pool(None) => PoolSpec::Pool(Some(n)),
            PoolSpec::Pipeline(None, d) => {
                PoolSpec::Pipeline(Some(n), Some(d.unwrap_or(DEFAULT_PIPELINE_DEPTH)))
            }
            PoolSpec::Elastic(None, m) => {
                PoolSpec::Elastic(Some(n), Some(m.unwrap_or((n / 2).max(1))))
            }
            PoolSpec::TakeOrCreate(None) => PoolSpec::TakeOrCreate(Some(n)),
            other => other,
        }
    }

    /// The pool size, where the strategy has one (for `partitioned:KxN`,
    /// K×N; for `elastic:N+M`, N).
    pub fn size(&self) -> Option<usize> {
        match *self {
            PoolSpec::PerRequest | PoolSpec::Shared => None,
            PoolSpec::Partitioned(k, n) => Some(k? * n?),
            PoolSpec::RoundRobin(n)
            | PoolSpec::Pipeline(n, _)
            | PoolSpec::LeastLoaded(n)
            | PoolSpec::Pool(n)
            | PoolSpec::Elastic(n, _)
            | PoolSpec::TakeOrCreate(n) => n,
        }
    }
}

impl fmt::Display for PoolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())?;
        match *self {
            PoolSpec::Elastic(Some(n), Some(m)) => write!(f, ":{n}+{m}"),
            PoolSpec::Elastic(Some(n), None) => write!(f, ":{n}"),
            PoolSpec::Partitioned(Some(k), Some(n)) => write!(f, ":{k}x{n}"),
            PoolSpec::Pipeline(Some(n), d) => {
                write!(f, ":{n}x{}", d.unwrap_or(DEFAULT_PIPELINE_DEPTH))
            }
            _ => match self.size() {
                Some(n) => write!(f, ":{n}"),
                None => Ok(()),
            },
        }
    }
}

impl FromStr for PoolSpec {
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
            "per-request" => PoolSpec::PerRequest,
            "shared" => PoolSpec::Shared,
            "round-robin" => PoolSpec::RoundRobin(sized(arg)?),
            "least-loaded" => PoolSpec::LeastLoaded(sized(arg)?),
            "partitioned" => match arg {
                None => PoolSpec::Partitioned(None, None),
                Some(arg) => match arg.split_once(['x', 'X']) {
                    Some((k, n)) => {
                        PoolSpec::Partitioned(Some(size(k.trim())?), Some(size(n.trim())?))
                    }
                    None => return Err(err("expected partitioned:KxN, e.g. partitioned:4x8")),
                },
            },
            "pool" => PoolSpec::Pool(sized(arg)?),
            "pipeline" => match arg.map(|a| a.split_once(['x', 'X'])) {
                None => PoolSpec::Pipeline(None, None),
                Some(Some((n, d))) => {
                    PoolSpec::Pipeline(Some(size(n.trim())?), Some(size(d.trim())?))
                }
                Some(None) => PoolSpec::Pipeline(sized(arg)?, Some(DEFAULT_PIPELINE_DEPTH)),
            },
            "take-or-create" => PoolSpec::TakeOrCreate(sized(arg)?),
            "elastic" => match arg {
                None => PoolSpec::Elastic(None, None),
                Some(arg) => match arg.split_once('+') {
                    Some((n, m)) => match m.trim().parse::<usize>() {
                        Ok(m) => PoolSpec::Elastic(Some(size(n.trim())?), Some(m)),
                        Err(_) => return Err(err("overflow must be a whole number")),
                    },
                    None => PoolSpec::Elastic(None, None).with_size(size(arg)?),
                },
            },
            _ => {
                return Err(err(
                    "unknown strategy; expected per-request, shared, round-robin:N, \
                     least-loaded:N, pool:N, elastic:N+M, take-or-create:N, partitioned:KxN \
                     or pipeline:NxD",
                ))
            }
        };
        Ok(spec)
    }
}

impl TryFrom<String> for PoolSpec {
    type Error = SpecError;
    fn try_from(s: String) -> Result<Self, SpecError> {
        s.parse()
    }
}

impl From<PoolSpec> for String {
    fn from(s: PoolSpec) -> String {
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

impl SpecError {
    /// `input` could not be read as a strategy, for `reason`.
    pub fn new(input: &str, reason: &str) -> SpecError {
        SpecError {
            input: input.to_string(),
            reason: reason.to_string(),
        }
    }
}
