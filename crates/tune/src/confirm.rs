//! The confirmation: the chosen size and its neighbours, repeated; the
//! smallest size within 5% of the best, or tied with it (their intervals
//! overlap), wins; the other sizes tied with the winner are named.
use super::verdict::{close_to_best, meets, tie};
use poolbench_model::{Slo, TunePoint};

/// The sizes to confirm: the chosen one, about 10% below and above (the
/// one above at most `upper`).
pub fn confirm_sizes(chosen: usize, upper: usize) -> Vec<usize> {
    let step = (chosen / 10).max(1);
    let mut sizes = vec![chosen];
    if chosen > 1 {
        sizes.insert(0, chosen - step);
    }
    if chosen + step <= upper {
        sizes.push(chosen + step);
    }
    sizes
}

/// The winner among the confirmation points of one family, with the sizes
/// tied with it; `Err`: why none.
pub fn decide<'a>(
    points: &[&'a TunePoint],
    slo: Option<&Slo>,
    stall_s: f64,
) -> Result<(&'a TunePoint, Vec<usize>), String> {
    let mut ok: Vec<&TunePoint> = points
        .iter()
        .copied()
        .filter(|p| meets(p, slo, stall_s).is_ok())
        .collect();
    ok.sort_by_key(|p| p.pool_size);
    let best_point = ok
        .iter()
        .copied()
        .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps))
        .ok_or_else(|| match points.iter().max_by_key(|p| p.pool_size) {
            Some(p) => format!(
                "the confirmation failed: {} {}",
                p.strategy,
                meets(p, slo, stall_s).err().unwrap_or_default()
            ),
            None => "nothing was confirmed".to_string(),
        })?;
    let winner = ok
        .iter()
        .copied()
        .find(|p| close_to_best(p, best_point))
        .expect("the best qualifies");
    let tied = ok
        .iter()
        .filter(|p| p.pool_size != winner.pool_size && tie(p, winner))
        .map(|p| p.pool_size)
        .collect();
    Ok((winner, tied))
}
