//! Two results side by side: cells matched by (target scheme, strategy,
//! concurrency, pool size), the change of throughput, p50, p99 and error
//! rate, and whether a change is significant (Welch's t-test on the
//! repetitions, both sides with at least 3; "not significant" otherwise).
use crate::bounds::{Bound, BoundCheck};
use crate::format::fmt_rate;
use poolbench_model::{cell_label, CellResult, RunResult};
use serde::Serialize;

/// One matched cell.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct CellChange {
    pub strategy: String,
    pub concurrency: usize,
    pub pool_size: Option<usize>,
    pub base_throughput_rps: f64,
    pub new_throughput_rps: f64,
    pub base_p99_us: f64,
    pub new_p99_us: f64,
    /// Relative changes, in percent.
    pub throughput_pct: f64,
    pub p50_pct: f64,
    pub p99_pct: f64,
    /// New error rate minus base's, in percentage points.
    pub error_rate_pp: f64,
    /// Welch's test at 95% on the repetitions' throughput and p99; `None`
    /// when a side has fewer than 3.
    pub throughput_significant: Option<bool>,
    pub p99_significant: Option<bool>,
}

/// The comparison.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    pub base: String,
    pub new: String,
    pub cells: Vec<CellChange>,
    /// Cells in only one of the two, `strategy c=N`.
    pub unmatched: Vec<String>,
}

fn key(r: &RunResult, c: &CellResult) -> (String, String, usize, Option<usize>) {
    (
        r.config.target.scheme.clone(),
        c.strategy.clone(),
        c.concurrency,
        c.pool_size,
    )
}

fn pct(base: f64, new: f64) -> f64 {
    match base.abs() > 0.0 {
        true => (new - base) / base * 100.0,
        false => 0.0,
    }
}

/// `base` against `new`.
pub fn compare(base: &RunResult, new: &RunResult) -> Comparison {
    let mut cells = Vec::new();
    let mut unmatched = Vec::new();
    for b in &base.cells {
        let Some(n) = new.cells.iter().find(|n| key(new, n) == key(base, b)) else {
            unmatched.push(format!("{} (base only)", b.label()));
            continue;
        };
        let side = |c: &CellResult, f: fn(&poolbench_model::Sample) -> f64| -> Vec<f64> {
            c.samples.iter().map(f).collect()
        };
        cells.push(CellChange {
            strategy: b.strategy.clone(),
            concurrency: b.concurrency,
            pool_size: b.pool_size,
            base_throughput_rps: b.throughput_rps,
            new_throughput_rps: n.throughput_rps,
            throughput_pct: pct(b.throughput_rps, n.throughput_rps),
            p50_pct: pct(b.latency_us.p50, n.latency_us.p50),
            p99_pct: pct(b.latency_us.p99, n.latency_us.p99),
            base_p99_us: b.latency_us.p99,
            new_p99_us: n.latency_us.p99,
            error_rate_pp: (n.error_rate() - b.error_rate()) * 100.0,
            throughput_significant: welch(
                &side(b, |s| s.throughput_rps),
                &side(n, |s| s.throughput_rps),
            ),
            p99_significant: welch(&side(b, |s| s.p99_us), &side(n, |s| s.p99_us)),
        });
    }
    for n in &new.cells {
        if !base.cells.iter().any(|b| key(base, b) == key(new, n)) {
            unmatched.push(format!("{} (new only)", n.label()));
        }
    }
    Comparison {
        base: base.target.clone(),
        new: new.target.clone(),
        cells,
        unmatched,
    }
}

/// Welch's t-test, two-sided at 95%: `None` with fewer than 3 values on
/// a side.
pub(crate) fn welch(a: &[f64], b: &[f64]) -> Option<bool> {
    welch_from(a, b, 3)
}

/// Welch's t-test, two-sided at 95%, with at least `least` values a side
/// (`None` with fewer).
pub(crate) fn welch_from(a: &[f64], b: &[f64], least: usize) -> Option<bool> {
    if a.len() < least.max(2) || b.len() < least.max(2) {
        return None;
    }
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    let ((na, ma, va), (nb, mb, vb)) = (stats(a), stats(b));
    let (sa, sb) = (va / na, vb / nb);
    if sa + sb == 0.0 {
        return Some(ma != mb);
    }
    let t = (ma - mb).abs() / (sa + sb).sqrt();
    let df = (sa + sb).powi(2) / (sa.powi(2) / (na - 1.0) + sb.powi(2) / (nb - 1.0));
    Some(t > t_critical(df))
}

/// The two-sided 95% critical value of Student's t for `df` degrees of
/// freedom (table, the next lower df; 1.96 beyond 30).
fn t_critical(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df.floor() as usize {
        0 => TABLE[0],
        n if n <= 30 => TABLE[n - 1],
        _ => 1.96,
    }
}

/// The cells whose significant change crosses a bound, with why.
pub fn violations(c: &Comparison, bounds: &[Bound]) -> Vec<String> {
    bound_checks(c, bounds)
        .into_iter()
        .filter(|x| x.crossed)
        .map(|x| x.line)
        .collect()
}

/// Every bound against every matched cell, crossed or not.
pub fn bound_checks(c: &Comparison, bounds: &[Bound]) -> Vec<BoundCheck> {
    let mut out = Vec::new();
    for cell in &c.cells {
        for b in bounds {
            let (change, significant) = match b.metric.as_str() {
                "throughput" => (cell.throughput_pct, cell.throughput_significant),
                "p99" => (cell.p99_pct, cell.p99_significant),
                "p50" => (cell.p50_pct, cell.p99_significant),
                // Error rates are counts, not samples: any change counts.
                _ => (cell.error_rate_pp, Some(true)),
            };
            let beyond = b.beyond(change);
            let unit = if b.metric == "errors" { " pp" } else { "%" };
            let bound = b.written();
            let label = cell_label(&cell.strategy, cell.concurrency);
            let noise = match significant {
                Some(true) => "",
                Some(false) => " (not significant)",
                None => " (one sample: significance unknown)",
            };
            out.push(BoundCheck {
                measured: format!("{} {change:+.1}{unit}{noise}", b.metric),
                crossed: beyond && significant == Some(true),
                line: format!("{label}: {} {change:+.1}{unit} (bound {bound})", b.metric),
                cell: label,
                bound,
            });
        }
    }
    out
}

/// The comparison as a table.
pub fn render_comparison(c: &Comparison) -> String {
    let mut out = format!("base {} · new {}\n", c.base, c.new);
    out.push_str(&format!(
        "  {:<22} {:>5} {:>10} {:>10} {:>10} {:>8} {:>8} {:>9}  {}\n",
        "strategy", "c", "base req/s", "new req/s", "req/s", "p50", "p99", "errors", "significance"
    ));
    for x in &c.cells {
        let sig = match (x.throughput_significant, x.p99_significant) {
            (None, _) | (_, None) => "not significant (fewer than 3 reps)".to_string(),
            (Some(t), Some(p)) => format!(
                "throughput {}, p99 {}",
                if t { "significant" } else { "not significant" },
                if p { "significant" } else { "not significant" }
            ),
        };
        out.push_str(&format!(
            "  {:<22} {:>5} {:>10} {:>10} {:>+9.1}% {:>+7.1}% {:>+7.1}% {:>+7.2}pp  {sig}\n",
            x.strategy,
            x.concurrency,
            fmt_rate(x.base_throughput_rps),
            fmt_rate(x.new_throughput_rps),
            x.throughput_pct,
            x.p50_pct,
            x.p99_pct,
            x.error_rate_pp
        ));
    }
    for u in &c.unmatched {
        out.push_str(&format!("  unmatched: {u}\n"));
    }
    out
}

/// The JSON Schema of a [`Comparison`] (`poolbench schema comparison`).
pub fn comparison_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(Comparison)).expect("a schema serializes");
    schema["title"] = "poolbench comparison".into();
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_tells_a_shift_from_noise() {
        assert_eq!(
            welch(&[100.0, 101.0, 99.0], &[80.0, 81.0, 79.0]),
            Some(true)
        );
        assert_eq!(
            welch(&[100.0, 110.0, 90.0], &[101.0, 95.0, 108.0]),
            Some(false)
        );
        assert_eq!(welch(&[1.0, 2.0], &[3.0, 4.0, 5.0]), None);
    }
}
