//! Response delay: none, fixed, uniform or log-normal, in a string form.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::Rng;
use rand_distr::Distribution;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ConfigError;

/// The standard normal 99th percentile: p99 = median * exp(sigma * Z99).
const Z99: f64 = 2.326_347_874_040_841;

/// Longest delay a sample can produce (a heavy log-normal tail is cut here).
const MAX_DELAY: Duration = Duration::from_secs(3600);

const EXPECTED: &str = "expected a duration like 50ms, uniform(10ms,30ms) or lognormal(20ms,200ms)";

/// How long the server waits before answering.
///
/// String forms (whitespace tolerant, keywords case-insensitive):
/// `0`, `0ms` or `none`; `50ms` (any humantime duration); `uniform(10ms,30ms)`;
/// `lognormal(20ms,200ms)` — median 20 ms and 99th percentile 200 ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DelaySpec {
    /// Answer at once.
    #[default]
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniformly between the two bounds (inclusive, `lo <= hi`).
    Uniform(Duration, Duration),
    /// Log-normal with this median and 99th percentile (`p99 > median > 0`).
    LogNormal {
        /// The 50th percentile.
        median: Duration,
        /// The 99th percentile.
        p99: Duration,
    },
}

impl DelaySpec {
    /// Draws one delay. Never panics, even for values that fail validation.
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        Sampler::new(self).sample(rng)
    }

    /// Rejects bounds that make no sense (`lo > hi`, `p99 <= median`, zero median).
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        let fail = |reason: String| ConfigError::InvalidDelay {
            input: self.to_string(),
            reason,
        };
        match *self {
            DelaySpec::Uniform(lo, hi) if lo > hi => Err(fail(format!(
                "lower bound {} is above upper bound {}",
                fmt_dur(lo),
                fmt_dur(hi)
            ))),
            DelaySpec::LogNormal { median, .. } if median.is_zero() => {
                Err(fail("the median must be greater than 0".to_string()))
            }
            DelaySpec::LogNormal { median, p99 } if p99 <= median => Err(fail(format!(
                "the p99 {} must be greater than the median {}",
                fmt_dur(p99),
                fmt_dur(median)
            ))),
            _ => Ok(()),
        }
    }
}

/// A delay distribution prepared once, for the request path.
#[derive(Clone, Debug)]
pub(crate) enum Sampler {
    None,
    Fixed(Duration),
    Uniform { lo: u64, hi: u64 },
    LogNormal(rand_distr::LogNormal<f64>),
}

impl Sampler {
    pub(crate) fn new(spec: &DelaySpec) -> Sampler {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        match *spec {
            DelaySpec::None => Sampler::None,
            DelaySpec::Fixed(d) if d.is_zero() => Sampler::None,
            DelaySpec::Fixed(d) => Sampler::Fixed(d),
            DelaySpec::Uniform(lo, hi) => {
                let (lo, hi) = (nanos(lo), nanos(hi));
                Sampler::Uniform {
                    lo: lo.min(hi),
                    hi: lo.max(hi),
                }
            }
            DelaySpec::LogNormal { median, p99 } => {
                let mu = median.as_secs_f64().ln();
                let sigma = (p99.as_secs_f64().ln() - mu) / Z99;
                match rand_distr::LogNormal::new(mu, sigma) {
                    Ok(dist) if mu.is_finite() && sigma.is_finite() => Sampler::LogNormal(dist),
                    _ => Sampler::Fixed(median),
                }
            }
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Sampler::None)
    }

    pub(crate) fn sample(&self, rng: &mut impl Rng) -> Duration {
        match self {
            Sampler::None => Duration::ZERO,
            Sampler::Fixed(d) => *d,
            Sampler::Uniform { lo, hi } => Duration::from_nanos(rng.random_range(*lo..=*hi)),
            Sampler::LogNormal(dist) => {
                let secs: f64 = dist.sample(rng);
                Duration::try_from_secs_f64(secs.min(MAX_DELAY.as_secs_f64())).unwrap_or(MAX_DELAY)
            }
        }
    }
}

fn fmt_dur(d: Duration) -> String {
    poolbench_model::duration::format(d)
}

fn parse_dur(text: &str) -> Option<Duration> {
    poolbench_model::duration::parse(text).ok()
}

/// `name ( args )` with `name` matched case-insensitively; returns `args`.
fn strip_call<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let head = text.get(..name.len())?;
    if !head.eq_ignore_ascii_case(name) {
        return None;
    }
    let rest = text[name.len()..].trim_start();
    rest.strip_prefix('(')?.strip_suffix(')')
}

impl FromStr for DelaySpec {
    type Err = ConfigError;

    fn from_str(input: &str) -> Result<Self, ConfigError> {
        let fail = |reason: String| ConfigError::InvalidDelay {
            input: input.to_string(),
            reason,
        };
        let text = input.trim();
        if text.eq_ignore_ascii_case("none") {
            return Ok(DelaySpec::None);
        }
        for name in ["uniform", "lognormal"] {
            let Some(args) = strip_call(text, name) else {
                continue;
            };
            let parts: Vec<&str> = args.split(',').collect();
            let [a, b] = parts[..] else {
                return Err(fail(format!(
                    "{name} takes two durations, e.g. {name}(10ms,30ms)"
                )));
            };
            let bound = |s: &str| {
                parse_dur(s).ok_or_else(|| {
                    fail(format!(
                        "{:?} is not a duration (expected e.g. 10ms)",
                        s.trim()
                    ))
                })
            };
            let (a, b) = (bound(a)?, bound(b)?);
            let spec = if name == "uniform" {
                DelaySpec::Uniform(a, b)
            } else {
                DelaySpec::LogNormal { median: a, p99: b }
            };
            return match spec.check() {
                Ok(()) => Ok(spec),
                Err(ConfigError::InvalidDelay { reason, .. }) => Err(fail(reason)),
                Err(other) => Err(other),
            };
        }
        match parse_dur(text) {
            Some(d) if d.is_zero() => Ok(DelaySpec::None),
            Some(d) => Ok(DelaySpec::Fixed(d)),
            None => Err(fail(EXPECTED.to_string())),
        }
    }
}

impl fmt::Display for DelaySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = fmt_dur;
        match *self {
            DelaySpec::None => f.write_str("none"),
            DelaySpec::Fixed(d) => write!(f, "{}", h(d)),
            DelaySpec::Uniform(lo, hi) => write!(f, "uniform({},{})", h(lo), h(hi)),
            DelaySpec::LogNormal { median, p99 } => {
                write!(f, "lognormal({},{})", h(median), h(p99))
            }
        }
    }
}

impl Serialize for DelaySpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DelaySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
