//! How each strategy's throughput grows with concurrency: a Universal
//! Scalability Law fit, X(N) = λN / (1 + σ(N−1) + κN(N−1)), whose peak
//! names the concurrency beyond which more connections only cost.
use poolbench_model::{CellResult, RunResult, StrategySpec, UslFit};
use std::collections::BTreeMap;

/// Concurrency levels a fit needs.
pub const USL_MIN_LEVELS: usize = 4;

/// Cells by strategy, ordered by concurrency, successes only.
pub(crate) fn by_strategy(result: &RunResult) -> BTreeMap<&str, Vec<&CellResult>> {
    let mut m: BTreeMap<&str, Vec<&CellResult>> = BTreeMap::new();
    for c in result.cells.iter().filter(|c| c.ok > 0) {
        m.entry(c.strategy.as_str()).or_default().push(c);
    }
    for cells in m.values_mut() {
        cells.sort_by_key(|c| c.concurrency);
    }
    m
}

/// Share of the mean latency spent waiting for a stream above which a
/// multiplexed strategy had none to spare.
const STREAM_WAIT_SHARE: f64 = 0.05;

/// Were connections not the cap of `c`? An exclusive strategy with at
/// least one connection per worker, one without a cap (per-request,
/// take-or-create), or a multiplexed one (shared, round-robin,
/// least-loaded) whose requests hardly waited for a stream. Only such
/// cells describe the service rather than the pool.
pub(crate) fn uncapped(c: &CellResult) -> bool {
    let Some(cap) = c.connection_cap else {
        return true;
    };
    let shares = c
        .strategy
        .parse::<StrategySpec>()
        .is_ok_and(|s| s.shares_connections());
    match shares {
        true => c.checkout_wait_us.mean <= STREAM_WAIT_SHARE * c.latency_us.mean,
        false => cap >= c.concurrency,
    }
}

/// A USL fit for every strategy with at least [`USL_MIN_LEVELS`]
/// concurrency levels where connections were not the cap (closed loop
/// only): the fit describes the service, not the pool.
pub fn usl_fits(result: &RunResult) -> Vec<UslFit> {
    by_strategy(result)
        .into_iter()
        .filter_map(|(strategy, cells)| {
            let points: Vec<(f64, f64)> = cells
                .iter()
                .filter(|c| uncapped(c))
                .map(|c| (c.concurrency as f64, c.throughput_rps))
                .collect();
            fit(&points).map(|mut u| {
                u.strategy = strategy.to_string();
                u
            })
        })
        .collect()
}

/// Least squares on the linearized law: with λ from the lowest level
/// (X(N₀)/N₀ when N₀ = 1, else the largest X/N), N·λ/X − 1 = σ(N−1) +
/// κN(N−1), a regression through the origin on two variables, σ and κ
/// clamped to ≥ 0.
pub(crate) fn fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let mut levels: Vec<f64> = points.iter().map(|p| p.0).collect();
    levels.dedup();
    if levels.len() < USL_MIN_LEVELS || points.iter().any(|p| p.1 <= 0.0) {
        return None;
    }
    let lambda = points.iter().map(|(n, x)| x / n).fold(0.0, f64::max);
    // y = a·u + b·v with u = N−1, v = N(N−1).
    let (mut uu, mut uv, mut vv, mut uy, mut vy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in points {
        let (u, v, y) = (n - 1.0, n * (n - 1.0), n * lambda / x - 1.0);
        uu += u * u;
        uv += u * v;
        vv += v * v;
        uy += u * y;
        vy += v * y;
    }
    let det = uu * vv - uv * uv;
    let (mut sigma, mut kappa) = if det.abs() > f64::EPSILON * uu * vv {
        ((uy * vv - vy * uv) / det, (vy * uu - uy * uv) / det)
    } else {
        (0.0, 0.0)
    };
    if kappa < 0.0 {
        kappa = 0.0;
        sigma = if uu > 0.0 { uy / uu } else { 0.0 };
    }
    if sigma < 0.0 {
        sigma = 0.0;
        kappa = if vv > 0.0 { (vy / vv).max(0.0) } else { 0.0 };
    }
    let model = |n: f64| lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let resid: f64 = points.iter().map(|p| (p.1 - model(p.0)).powi(2)).sum();
    let r2 = if total > 0.0 {
        1.0 - resid / total
    } else {
        0.0
    };
    let peak_concurrency = (kappa > 1e-12 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let largest = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let peak_throughput = model(peak_concurrency.unwrap_or(largest));
    Some(UslFit {
        strategy: String::new(),
        lambda,
        sigma,
        kappa,
        peak_concurrency,
        peak_throughput,
        r2,
    })
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn the_law_is_recovered_from_its_own_curve() {
        let (lambda, sigma, kappa) = (1000.0, 0.05, 0.0004);
        let points: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
            .iter()
            .map(|&n| {
                (
                    n,
                    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)),
                )
            })
            .collect();
        let u = fit(&points).unwrap();
        assert!((u.sigma - sigma).abs() < 1e-6, "{u:?}");
        assert!((u.kappa - kappa).abs() < 1e-8, "{u:?}");
        let peak = ((1.0 - sigma) / kappa).sqrt();
        assert!((u.peak_concurrency.unwrap() - peak).abs() < 0.01, "{u:?}");
        assert!(u.r2 > 0.9999, "{u:?}");
    }

    #[test]
    fn linear_growth_has_no_peak_and_few_levels_no_fit() {
        let linear: Vec<(f64, f64)> = (1..=5).map(|n| (n as f64, 100.0 * n as f64)).collect();
        let u = fit(&linear).unwrap();
        assert!(u.sigma < 1e-9 && u.kappa < 1e-12, "{u:?}");
        assert_eq!(u.peak_concurrency, None);
        assert!(fit(&linear[..3]).is_none());
    }
}
