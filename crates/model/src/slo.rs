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
    /// Largest error rate, a fraction.
    pub error_rate: Option<f64>,
    /// Least throughput, req/s.
    pub throughput_rps: Option<f64>,
}

impl std::str::FromStr for Slo {
    type Err = String;

    /// `p99<50ms,p50<5ms,errors<1%,throughput>5000`.
    fn from_str(text: &str) -> Result<Slo, String> {
        let mut slo = Slo::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                format!("--slo \"{part}\": expected p50<DURATION, p99<DURATION, errors<N% or throughput>N")
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
