//! Value parsers for clap: each error is one line naming what was wrong.
use poolbench_model::StrategySpec;
use poolbench_server::DelaySpec;
use std::time::Duration;

pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    poolbench_model::duration::parse(s)
        .map_err(|_| format!("\"{s}\" is not a duration; use e.g. 500ms, 10s, 2m"))
}

/// An address to listen on: IP:PORT (port 0 picks a free one).
pub(crate) fn listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("\"{s}\" is not an address to listen on; use IP:PORT, e.g. 127.0.0.1:9464")
    })
}

/// A duration above zero (a timeout of 0 would fail every request).
pub(crate) fn positive_duration(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err(format!("\"{s}\" must be above zero")),
        d => Ok(d),
    }
}

pub(crate) fn ramp(s: &str) -> Result<poolbench_model::Ramp, String> {
    poolbench_model::Ramp::parse(s)
}

pub(crate) fn shard(s: &str) -> Result<poolbench_model::Shard, String> {
    s.parse()
}

/// An RFC 3339 instant, kept as given (the plan carries it).
pub(crate) fn start_at(s: &str) -> Result<String, String> {
    poolbench_model::parse_start(s).map(|_| s.to_string())
}

pub(crate) fn slo(s: &str) -> Result<poolbench_model::Slo, String> {
    s.parse()
}

pub(crate) fn strategy(s: &str) -> Result<StrategySpec, String> {
    s.parse()
        .map_err(|e: poolbench_model::SpecError| e.to_string())
}

pub(crate) fn concurrency(s: &str) -> Result<usize, String> {
    at_least_one(s, "concurrency")
}

pub(crate) fn pool_size(s: &str) -> Result<usize, String> {
    at_least_one(s, "pool size")
}

pub(crate) fn count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("\"{s}\" is not a whole number")),
    }
}

fn at_least_one(s: &str, what: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err(format!("{what} must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{what} \"{s}\" is not a whole number")),
    }
}

pub(crate) fn delay(s: &str) -> Result<DelaySpec, String> {
    s.parse()
        .map_err(|e: poolbench_server::ConfigError| e.to_string())
}

pub(crate) fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("\"{s}\" is not a fraction between 0 and 1")),
    }
}

pub(crate) fn rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        Ok(_) => Err("rate must be greater than zero".to_string()),
        Err(_) => Err(format!("\"{s}\" is not a rate in requests per second")),
    }
}

pub(crate) fn reps(s: &str) -> Result<usize, String> {
    at_least_one(s, "reps")
}

pub(crate) fn depth(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(d) if d >= 2 => Ok(d),
        _ => Err(format!(
            "pipeline depth \"{s}\" must be a whole number of at least 2"
        )),
    }
}

pub(crate) fn streams(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("\"{s}\" is not a whole number up to 4294967295")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text near what the parsers take: their words, digits, units and
    /// punctuation, and anything else.
    fn near() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("pool".to_string()),
            Just("elastic".to_string()),
            Just("partitioned".to_string()),
            Just("uniform(".to_string()),
            Just("lognormal(".to_string()),
            Just("exp(".to_string()),
            Just("http://".to_string()),
            Just("postgres://".to_string()),
            Just("host=".to_string()),
            "[0-9]{1,25}",
            "(ms|s|us|m|h|x|\\.|,|:|\\+|-|\\)|\\(|@|/|\\?|=|')",
            any::<String>(),
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 2048,
            rng_seed: proptest::test_runner::RngSeed::Fixed(17),
            failure_persistence: None,
            ..Default::default()
        })]

        /// Every parser of the command line answers any text with a value
        /// or an error, never a panic.
        #[test]
        fn the_parsers_never_panic(s in near()) {
            let _ = duration(&s);
            let _ = positive_duration(&s);
            let _ = strategy(&s);
            let _ = concurrency(&s);
            let _ = pool_size(&s);
            let _ = count(&s);
            let _ = delay(&s);
            let _ = fraction(&s);
            let _ = rate(&s);
            let _ = reps(&s);
            let _ = depth(&s);
            let _ = streams(&s);
            let _ = slo(&s);
            let _ = poolbench_targets::parse_target(&s);
        }
    }
}
