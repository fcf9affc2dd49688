//! Service-level bounds a cell must meet (`--slo 'p99<50ms,errors<1%,
//! throughput>5000'`): the recommendation picks only among cells that
//! meet them, and each cell records which it broke.
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The bounds; `None`: not asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Slo {
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// p90 and p99.9 bounds, µs (`run` and `tune --find-rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_us: Option<f64>,
    /// Largest error rate, a fraction.
    pub error_rate: Option<f64>,
    /// Least throughput, req/s.
    pub throughput_rps: Option<f64>,
}

impl Slo {
    /// The latency bounds asked, lowest percentile first: its name and
    /// the bound, µs.
    pub fn latency_bounds(&self) -> Vec<(&'static str, f64)> {
        [
            ("p50", self.p50_us),
            ("p90", self.p90_us),
            ("p99", self.p99_us),
            ("p99.9", self.p999_us),
        ]
        .into_iter()
        .filter_map(|(name, b)| b.map(|b| (name, b)))
        .collect()
    }
}

/// A percentile of `summary` by the name [`Slo::latency_bounds`] gives it.
pub fn percentile_of(summary: &crate::Summary, name: &str) -> f64 {
    match name {
        "p50" => summary.p50,
        "p90" => summary.p90,
        "p99.9" => summary.p999,
        _ => summary.p99,
    }
}

impl std::str::FromStr for Slo {
    type Err = String;

    /// `p99<50ms,p50<5ms,errors<1%,throughput>5000`.
    fn from_str(text: &str) -> Result<Slo, String> {
        let mut slo = Slo::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                format!("--slo \"{part}\": expected p50<DURATION, p90<DURATION, p99<DURATION, p99.9<DURATION, errors<N% or throughput>N")
            };
            let latency = |v: &str| -> Result<f64, String> {
                crate::duration::parse(v)
                    .map(|d: Duration| d.as_secs_f64() * 1e6)
                    .map_err(|_| bad())
            };
            if let Some(v) = part.strip_prefix("p99<") {
                slo.p99_us = Some(latency(v)?);
            } else if let Some(v) = part.strip_prefix("p50<") {
                slo.p50_us = Some(latency(v)?);
            } else if let Some(v) = part.strip_prefix("p90<") {
                slo.p90_us = Some(latency(v)?);
            } else if let Some(v) = part.strip_prefix("p99.9<") {
                slo.p999_us = Some(latency(v)?);
            } else if let Some(v) = part.strip_prefix("errors<") {
                let pct: f64 = v.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
                slo.error_rate = Some(pct / 100.0);
            } else if let Some(v) = part.strip_prefix("throughput>") {
                slo.throughput_rps = Some(v.trim().parse().map_err(|_| bad())?);
            } else {
                return Err(bad());
            }
        }
        if slo == Slo::default() {
            return Err("--slo: no bound given".to_string());
        }
        Ok(slo)
    }
}
