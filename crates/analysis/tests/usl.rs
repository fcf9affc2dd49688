//! The Universal Scalability Law fitted to cells that follow it.
use crate::support::{quiet, run};
use poolbench_analysis::{usl_fits, USL_MIN_LEVELS};
use poolbench_model::CellResult;

const LEVELS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// X(N) = λN / (1 + σ(N−1) + κN(N−1)), times `noise(i)` at the i-th level.
fn law(
    strategy: &str,
    lambda: f64,
    sigma: f64,
    kappa: f64,
    noise: impl Fn(usize) -> f64,
) -> Vec<CellResult> {
    LEVELS
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let n = c as f64;
            let x = lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
            quiet(strategy, c, x * noise(i))
        })
        .collect()
}

#[test]
fn sigma_and_kappa_are_recovered_from_the_laws_own_points() {
    let (lambda, sigma, kappa) = (500.0, 0.03, 0.0005);
    let fits = usl_fits(&run(law("pool:64", lambda, sigma, kappa, |_| 1.0)));
    assert_eq!(fits.len(), 1);
    let u = &fits[0];
    assert_eq!(u.strategy, "pool:64");
    assert!((u.lambda - lambda).abs() < 1e-6, "{u:?}");
    assert!((u.sigma - sigma).abs() < 1e-6, "{u:?}");
    assert!((u.kappa - kappa).abs() < 1e-8, "{u:?}");
    // The peak: √((1−σ)/κ) ≈ 44.
    let peak = ((1.0 - sigma) / kappa).sqrt();
    assert!(
        (u.peak_concurrency.expect("κ > 0: a peak") - peak).abs() < 0.01,
        "{u:?}"
    );
    let x_peak = lambda * peak / (1.0 + sigma * (peak - 1.0) + kappa * peak * (peak - 1.0));
    assert!((u.peak_throughput - x_peak).abs() < 0.01, "{u:?}");
    assert!(u.r2 > 0.9999, "{u:?}");
}

#[test]
fn a_noisy_curve_is_fitted_within_tolerance() {
    // ±2%, alternating, on a strategy with a peak inside the grid.
    let (sigma, kappa) = (0.05, 0.001);
    let noise = |i: usize| if i.is_multiple_of(2) { 1.02 } else { 0.98 };
    let u = usl_fits(&run(law("pool:64", 1000.0, sigma, kappa, noise))).remove(0);
    assert!((u.sigma - sigma).abs() < 0.02, "{u:?}");
    assert!((u.kappa - kappa).abs() < 0.3 * kappa, "{u:?}");
    let peak = ((1.0 - sigma) / kappa).sqrt();
    let fitted = u.peak_concurrency.expect("a peak");
    assert!(
        (fitted - peak).abs() < 0.15 * peak,
        "{fitted} against {peak}"
    );
    assert!(u.r2 > 0.95, "{u:?}");
}

#[test]
fn linear_growth_has_no_peak() {
    let u = usl_fits(&run(law("round-robin:64", 200.0, 0.0, 0.0, |_| 1.0))).remove(0);
    assert!(u.sigma < 1e-9 && u.kappa < 1e-12, "{u:?}");
    assert_eq!(u.peak_concurrency, None);
    // The fitted throughput at the largest level run.
    assert!((u.peak_throughput - 200.0 * 64.0).abs() < 1e-6, "{u:?}");
}

#[test]
fn a_fit_per_strategy_with_enough_levels_of_successes() {
    let mut cells = law("pool:64", 500.0, 0.03, 0.0005, |_| 1.0);
    // Three levels are too few.
    cells.extend(
        law("shared", 300.0, 0.1, 0.0, |_| 1.0)
            .into_iter()
            .take(USL_MIN_LEVELS - 1),
    );
    let fits = usl_fits(&run(cells.clone()));
    let names: Vec<&str> = fits.iter().map(|u| u.strategy.as_str()).collect();
    assert_eq!(names, ["pool:64"]);
    // A fourth level of shared, but one where nothing succeeded: still
    // three levels of successes.
    let mut failed = quiet("shared", 8, 0.0);
    failed.errors.total = 10;
    failed.requests = 10;
    cells.push(failed);
    assert_eq!(usl_fits(&run(cells.clone())).len(), 1);
    // A real fourth level: two fits.
    cells.push(quiet("shared", 16, 900.0));
    assert_eq!(usl_fits(&run(cells)).len(), 2);
}

#[test]
fn sigma_and_kappa_are_never_negative() {
    // Contention that grows more slowly than any N(N−1) term: the free
    // least squares would give κ < 0, a curve rising ever faster.
    let cells: Vec<CellResult> = LEVELS
        .iter()
        .map(|&c| {
            let n = c as f64;
            quiet("pool:64", c, 400.0 * n / (1.0 + 0.5 * (n - 1.0).sqrt()))
        })
        .collect();
    let u = usl_fits(&run(cells)).remove(0);
    assert_eq!(u.kappa, 0.0, "{u:?}");
    assert!(u.sigma > 0.0, "{u:?}");
    assert_eq!(u.peak_concurrency, None);
    // Contention that grows faster than N(N−1): the free fit would give
    // σ < 0.
    let steep: Vec<CellResult> = LEVELS
        .iter()
        .map(|&c| {
            let n = c as f64;
            quiet("shared", c, 400.0 * n / (1.0 + 1e-5 * n.powi(3)))
        })
        .collect();
    let u = usl_fits(&run(steep)).remove(0);
    assert_eq!(u.sigma, 0.0, "{u:?}");
    assert!(u.kappa > 0.0, "{u:?}");
}
