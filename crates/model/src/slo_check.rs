//! Which of the SLO's bounds (`--slo`) a cell met and which it broke: a
//! pure function of the cell, here in the model so that the analysis (each
//! cell's `slo_breaches`) and the engine (`--stop-on-slo`) judge alike.
use crate::format::ms;
use crate::{CellResult, Slo};

/// One bound of the SLO checked against one cell.
#[derive(Clone, Debug, PartialEq)]
pub struct SloCheck {
    /// The bound as written: `p99 < 50.0 ms`.
    pub bound: String,
    /// What the cell measured: `p99 63.1 ms`.
    pub measured: String,
    pub met: bool,
    /// The breach in one line (`p99 63.1 ms > 50.0 ms`), also when met.
    pub line: String,
}

impl Slo {
    /// Each bound against `c`: the latency bounds (lowest percentile
    /// first), errors, throughput.
    pub fn checks(&self, c: &CellResult) -> Vec<SloCheck> {
        let mut out = Vec::new();
        let mut below = |name: &str, max: String, got: String, met: bool| {
            out.push(SloCheck {
                bound: format!("{name} < {max}"),
                measured: format!("{name} {got}"),
                met,
                line: format!("{name} {got} > {max}"),
            })
        };
        for (name, max) in self.latency_bounds() {
            let got = crate::percentile_of(&c.latency_us, name);
            below(name, ms(max), ms(got), got <= max);
        }
        if let Some(max) = self.error_rate {
            let pct = |f: f64| format!("{:.2}%", f * 100.0);
            below(
                "errors",
                pct(max),
                pct(c.error_rate()),
                c.error_rate() <= max,
            );
        }
        if let Some(min) = self.throughput_rps {
            out.push(SloCheck {
                bound: format!("throughput > {min:.0} req/s"),
                measured: format!("throughput {:.0} req/s", c.throughput_rps),
                met: c.throughput_rps >= min,
                line: format!("throughput {:.0} < {min:.0} req/s", c.throughput_rps),
            });
        }
        out
    }

    /// The bounds `c` breaks, each with its figure; empty when it meets
    /// them all.
    pub fn breaches(&self, c: &CellResult) -> Vec<String> {
        self.checks(c)
            .into_iter()
            .filter(|x| !x.met)
            .map(|x| x.line)
            .collect()
    }
}
