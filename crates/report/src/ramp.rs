//! A ramped cell, second by second: where the concurrency was, what it
//! gave, the connections the strategy held and the wait for one; and where
//! throughput stopped growing or p99 crossed the SLO.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_model::RunResult;
use std::fmt::Write;

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for c in &result.cells {
        let Some(r) = &c.ramp else {
            continue;
        };
        let open = c.requested_rate.is_some();
        let (what, column) = match open {
            true => ("rate", "rate"),
            false => ("concurrency", "c"),
        };
        let _ = writeln!(out, "\nramp of {} ({what}), second by second", c.strategy);
        let _ = writeln!(
            out,
            "  {:>5} {:>8} {:>12} {:>9} {:>7} {:>6} {:>10}",
            "t", column, "req/s", "p99", "errors", "conns", "wait mean"
        );
        for s in &r.seconds {
            let _ = writeln!(
                out,
                "  {:>4}s {:>8.0} {:>12} {:>9} {:>7} {:>6} {:>10}",
                s.t_s,
                s.target,
                fmt_rate(s.throughput_rps),
                fmt_duration_us(s.p99_us),
                s.errors,
                s.connections_open,
                fmt_duration_us(s.checkout_wait_mean_us)
            );
        }
        match r.saturated_at {
            Some(at) => {
                let _ = writeln!(
                    out,
                    "  throughput stopped growing at {column} ≈ {at:.0} (95% of the best second reached; the ramp went higher)"
                );
            }
            None => out.push_str("  throughput grew (or held) to the end of the ramp\n"),
        }
        if let Some(bound) = result.config.slo.as_ref().and_then(|s| s.p99_us) {
            match r.slo_p99_crossed_at {
                Some(at) => {
                    let _ = writeln!(
                        out,
                        "  p99 crossed the SLO's {} at {column} ≈ {at:.0}",
                        fmt_duration_us(bound)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  p99 stayed under the SLO's {} throughout",
                        fmt_duration_us(bound)
                    );
                }
            }
        }
    }
    out
}
