use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Settings shared by every strategy. Each field states its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct PoolConfig {
    /// Longest wait for a connection, including connecting. Default 30 s.
    #[serde(with = "crate::duration::millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub checkout_timeout: Duration,
    /// Idle connections older than this are closed. Default 10 min; `None` never.
    #[serde(with = "crate::duration::opt_millis")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>"))]
    pub idle_timeout: Option<Duration>,
    /// Connections are closed this long after opening, give or take
    /// `lifetime_jitter`. Default 30 min; `None` never.
    #[serde(with = "crate::duration::opt_millis")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>"))]
    pub max_lifetime: Option<Duration>,
    /// Fraction by which each connection's lifetime is randomly shortened or
    /// lengthened, so that connections opened together do not expire
    /// together. Default 0.1 (±10 %).
    pub lifetime_jitter: f64,
    /// How long an overflow connection (`elastic:N+M`) may stay idle before
    /// it is closed. Default 1 s.
    #[serde(with = "crate::duration::millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub overflow_grace: Duration,
    /// Connections `Strategy::prefill` (poolbench-pool) opens
    /// ahead of demand (capped at what the strategy keeps idle). Default 0.
    pub min_idle: usize,
    /// A checkout that would wait while its task already holds a connection
    /// from the same strategy fails at once with
    /// `AcquireError::NestedCheckout` (poolbench-pool)
    /// instead of waiting. Such waits are counted either way. Default false.
    pub fail_on_nested: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            checkout_timeout: Duration::from_secs(30),
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(1800)),
            lifetime_jitter: 0.1,
            overflow_grace: Duration::from_secs(1),
            min_idle: 0,
            fail_on_nested: false,
        }
    }
}
