//! The `adaptive` block: an adaptive limiter's bounds read off the
//! capacity curve (no-load latency, the knee to start from, the cliff as
//! the ceiling), with the settings of the common limiters. The static
//! pool stays the answer; this is for those who run a limiter as well.
use super::capacity::capacity_points;
use poolbench_model::{AdaptiveBounds, Capacity, ClientSetting, TunePoint};

/// The bounds, when the capacity search found a knee and a service time.
pub fn adaptive(cap: &Capacity, points: &[TunePoint]) -> Option<AdaptiveBounds> {
    let knee = cap.knee_in_flight?;
    let no_load = cap.service_time_us.filter(|us| *us > 0.0)?;
    let (max_limit, max_from) = match cap.cliff_in_flight {
        Some(cliff) => {
            let healthy = capacity_points(points)
                .into_iter()
                .map(|p| p.in_flight)
                .filter(|&n| n < cliff)
                .max()
                .unwrap_or(cliff.saturating_sub(1));
            (
                healthy,
                format!("the most in flight measured healthy, below the cliff at {cliff}"),
            )
        }
        None => (
            cap.most_in_flight_tried,
            "the most in flight tried: no cliff up to it".to_string(),
        ),
    };
    let max_limit = max_limit.max(knee);
    Some(AdaptiveBounds {
        no_load_latency_us: no_load,
        initial_limit: knee,
        max_limit,
        max_from,
        client_settings: settings(knee, max_limit),
    })
}

fn settings(initial: usize, max: usize) -> Vec<ClientSetting> {
    let one = |client: &str, setting: String| ClientSetting {
        client: client.to_string(),
        setting,
    };
    let min = (initial / 4).max(1);
    vec![
        one(
            "Envoy adaptive_concurrency",
            format!(
                "concurrency_limit_params: {{max_concurrency_limit: {max}}}, min_rtt_calc_params: {{min_concurrency: {min}}}"
            ),
        ),
        one(
            "Netflix concurrency-limits",
            format!("Gradient2Limit.newBuilder().initialLimit({initial}).minLimit({min}).maxConcurrency({max}).build()"),
        ),
        one(
            "Netflix concurrency-limits (Vegas)",
            format!("VegasLimit.newBuilder().initialLimit({initial}).maxConcurrency({max}).build()"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_knee_no_bounds_and_without_a_cliff_the_most_tried_is_the_ceiling() {
        let mut cap = Capacity {
            service_time_us: Some(2000.0),
            most_in_flight_tried: 64,
            ..Capacity::default()
        };
        assert!(adaptive(&cap, &[]).is_none());
        cap.knee_in_flight = Some(24);
        let a = adaptive(&cap, &[]).expect("a knee and a service time");
        assert_eq!((a.initial_limit, a.max_limit), (24, 64));
        assert!(a.client_settings[1].setting.contains("initialLimit(24)"));
        assert!(a.client_settings[0]
            .setting
            .contains("max_concurrency_limit: 64"));
        cap.cliff_in_flight = Some(30);
        let a = adaptive(&cap, &[]).expect("bounds");
        assert_eq!(
            a.max_limit, 29,
            "one below the cliff when no point says more"
        );
    }
}
