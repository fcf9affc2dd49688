//! The capacity curve fitted through the measured levels: throughput
//! against requests in flight, made non-decreasing by isotonic regression
//! (pool adjacent violators, each level weighted by its runs), so a single
//! noisy level can neither raise the peak nor move the knee alone. A fall
//! past the peak to below [`FALL_SHARE`] of it is a retrograde service, not
//! noise: those levels are left out of the fit.
use poolbench_model::{CurvePoint, TunePoint};

/// Past the highest level, a level below this share of it starts the fall
/// left out of the fit.
const FALL_SHARE: f64 = 0.75;

/// The fitted curve through `levels` (in order of requests in flight,
/// none failed).
pub fn fit_curve(levels: &[&TunePoint]) -> Vec<CurvePoint> {
    let Some(top) = levels
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.throughput_rps.total_cmp(&b.1.throughput_rps))
        .map(|(i, p)| (i, p.throughput_rps))
    else {
        return Vec::new();
    };
    let kept = levels
        .iter()
        .enumerate()
        .take_while(|(i, p)| *i <= top.0 || p.throughput_rps >= FALL_SHARE * top.1)
        .map(|(_, p)| *p);
    let points: Vec<(usize, f64, f64)> = kept
        .map(|p| (p.in_flight, p.throughput_rps, p.runs.max(1) as f64))
        .collect();
    let fitted = isotonic(&points.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>());
    points
        .iter()
        .zip(fitted)
        .map(|(p, y)| CurvePoint {
            in_flight: p.0,
            throughput_rps: y,
        })
        .collect()
}

/// Weighted isotonic (non-decreasing) regression of `(value, weight)` by
/// pooling adjacent violators: each value replaced by its block's mean.
pub fn isotonic(values: &[(f64, f64)]) -> Vec<f64> {
    // Blocks: (weighted mean, weight, members).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for &(y, w) in values {
        blocks.push((y, w, 1));
        while blocks.len() >= 2 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (y2, w2, n2) = blocks.pop().expect("two blocks");
            let (y1, w1, n1) = blocks.pop().expect("two blocks");
            let w = w1 + w2;
            blocks.push(((y1 * w1 + y2 * w2) / w, w, n1 + n2));
        }
    }
    blocks
        .into_iter()
        .flat_map(|(y, _, n)| std::iter::repeat_n(y, n))
        .collect()
}

/// The fitted peak, and the fewest requests in flight whose fitted
/// throughput reaches `share` of it.
pub fn knee_of(curve: &[CurvePoint], share: f64) -> Option<(f64, usize)> {
    let peak = curve.iter().map(|c| c.throughput_rps).fold(0.0, f64::max);
    let knee = curve.iter().find(|c| c.throughput_rps >= share * peak)?;
    Some((peak, knee.in_flight))
}

#[cfg(test)]
mod tests {
    use super::isotonic;

    #[test]
    fn pools_violators() {
        let y = isotonic(&[(1.0, 1.0), (3.0, 1.0), (2.0, 1.0), (4.0, 1.0)]);
        assert_eq!(y, vec![1.0, 2.5, 2.5, 4.0]);
        let y = isotonic(&[(10.0, 1.0), (30.0, 1.0), (25.0, 1.0), (26.0, 1.0)]);
        assert!((y[1] - 27.0).abs() < 1e-9 && y[1] == y[3], "{y:?}");
        let w = isotonic(&[(2.0, 3.0), (1.0, 1.0)]);
        assert_eq!(w, vec![1.75, 1.75]);
    }
}
