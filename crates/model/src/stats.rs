//! Small-sample statistics: mean and 95% confidence half-width.

/// Two-sided 95% Student t quantiles for 1..=30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Mean and the half-width of its 95% confidence interval (`None` with
/// fewer than two values).
pub fn mean_ci95(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len();
    if n == 0 {
        return (0.0, None);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = T95.get(n - 2).copied().unwrap_or(1.96);
    (mean, Some(t * (var / n as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_interval_of_known_samples() {
        let (m, ci) = mean_ci95(&[10.0, 12.0, 14.0]);
        assert_eq!(m, 12.0);
        // s = 2, n = 3, t(2) = 4.303: 4.303 * 2 / sqrt(3)
        assert!((ci.unwrap() - 4.968).abs() < 0.01);
        assert_eq!(mean_ci95(&[5.0]).1, None);
        assert_eq!(mean_ci95(&[5.0, 5.0, 5.0]).1, Some(0.0));
    }
}
