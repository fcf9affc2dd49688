//! Service-level bounds a cell must meet (`--slo 'p99<50ms,errors<1%,
//! throughput>5000'`): the recommendation picks only among cells that
//! meet them, and each cell records which it broke.
use crate::result::CellResult;
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
                humantime::parse_duration(v.trim())
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

impl Slo {
    /// The bounds `c` breaks, each with its figure; empty when it meets
    /// them all.
    pub fn breaches(&self, c: &CellResult) -> Vec<String> {
        let mut out = Vec::new();
        let ms = |us: f64| format!("{:.1} ms", us / 1000.0);
        if let Some(max) = self.p99_us.filter(|&m| c.latency_us.p99 > m) {
            out.push(format!("p99 {} > {}", ms(c.latency_us.p99), ms(max)));
        }
        if let Some(max) = self.p50_us.filter(|&m| c.latency_us.p50 > m) {
            out.push(format!("p50 {} > {}", ms(c.latency_us.p50), ms(max)));
        }
        if let Some(max) = self.error_rate.filter(|&m| c.error_rate() > m) {
            out.push(format!(
                "errors {:.2}% > {:.2}%",
                c.error_rate() * 100.0,
                max * 100.0
            ));
        }
        if let Some(min) = self.throughput_rps.filter(|&m| c.throughput_rps < m) {
            out.push(format!(
                "throughput {:.0} < {min:.0} req/s",
                c.throughput_rps
            ));
        }
        out
    }
}
