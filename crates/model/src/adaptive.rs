//! Bounds for an adaptive concurrency limiter, from the capacity curve:
//! for those who run one in front of the service, beside the static pool.
use crate::client_setting::ClientSetting;
use serde::{Deserialize, Serialize};

/// What an adaptive limiter should start from and never exceed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AdaptiveBounds {
    /// Mean latency with one request in flight, µs: the no-load latency
    /// a gradient limiter compares against (its minRTT).
    pub no_load_latency_us: f64,
    /// The knee: where to start (the initial limit).
    pub initial_limit: usize,
    /// The most in flight measured healthy (below the cliff): the
    /// maximum; the most tried when no cliff was found.
    pub max_limit: usize,
    /// Where `max_limit` came from, in words.
    pub max_from: String,
    /// The common limiters' settings (`settings` before tune's schema
    /// version 2).
    #[serde(alias = "settings")]
    pub client_settings: Vec<ClientSetting>,
}
