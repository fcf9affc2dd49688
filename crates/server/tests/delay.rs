//! Delay parsing, display and sampling.

use std::time::Duration;

use poolbench_server::{ConfigError, DelaySpec};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn parse(s: &str) -> DelaySpec {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn parse_err(s: &str) -> String {
    let err: ConfigError = s.parse::<DelaySpec>().expect_err(s);
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "one-line message: {msg}");
    msg
}

#[test]
fn zero_forms_are_none() {
    for s in ["0", "0ms", "none", "  none ", "NONE", " 0s "] {
        assert_eq!(parse(s), DelaySpec::None, "{s:?}");
    }
}

#[test]
fn fixed_uniform_lognormal() {
    assert_eq!(parse("50ms"), DelaySpec::Fixed(ms(50)));
    assert_eq!(parse(" 1s "), DelaySpec::Fixed(ms(1000)));
    assert_eq!(
        parse("uniform(10ms,30ms)"),
        DelaySpec::Uniform(ms(10), ms(30))
    );
    assert_eq!(
        parse(" uniform ( 10ms , 30ms ) "),
        DelaySpec::Uniform(ms(10), ms(30))
    );
    assert_eq!(parse("uniform(5ms,5ms)"), DelaySpec::Uniform(ms(5), ms(5)));
    assert_eq!(
        parse("lognormal(20ms,200ms)"),
        DelaySpec::LogNormal {
            median: ms(20),
            p99: ms(200)
        }
    );
    assert_eq!(
        parse("LogNormal( 20ms, 200ms )"),
        DelaySpec::LogNormal {
            median: ms(20),
            p99: ms(200)
        }
    );
}

#[test]
fn display_round_trips() {
    for s in [
        "none",
        "50ms",
        "uniform(10ms,30ms)",
        "lognormal(20ms,200ms)",
        "1s 500ms",
    ] {
        let spec = parse(s);
        assert_eq!(parse(&spec.to_string()), spec, "{s:?} -> {spec}");
    }
    assert_eq!(
        parse("uniform(10ms,30ms)").to_string(),
        "uniform(10ms,30ms)"
    );
    let json = serde_json::to_string(&parse("lognormal(20ms,200ms)")).unwrap();
    assert_eq!(json, r#""lognormal(20ms,200ms)""#);
    let back: DelaySpec = serde_json::from_str(r#""uniform(1ms,2ms)""#).unwrap();
    assert_eq!(back, DelaySpec::Uniform(ms(1), ms(2)));
    assert!(serde_json::from_str::<DelaySpec>(r#""10x""#).is_err());
}

#[test]
fn errors_name_the_problem() {
    assert_eq!(
        parse_err("10x"),
        r#"invalid delay "10x": expected a duration like 50ms, uniform(10ms,30ms) or lognormal(20ms,200ms)"#
    );
    assert!(parse_err("").contains("expected a duration"));
    assert!(parse_err("uniform(30ms,10ms)").contains("lower bound 30ms is above upper bound 10ms"));
    assert!(
        parse_err("lognormal(20ms,20ms)").contains("p99 20ms must be greater than the median 20ms")
    );
    assert!(parse_err("lognormal(200ms,20ms)").contains("greater than the median"));
    assert!(parse_err("lognormal(0ms,20ms)").contains("median must be greater than 0"));
    assert!(parse_err("uniform(10ms)").contains("uniform takes two durations"));
    assert!(parse_err("uniform(1ms,2ms,3ms)").contains("two durations"));
    assert!(parse_err("uniform(10ms,abc)").contains(r#""abc" is not a duration"#));
    assert!(parse_err("uniform(10ms,30ms").contains("expected a duration"));
    assert!(parse_err("gaussian(1ms,2ms)").contains("expected a duration"));
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn within_15_percent(got: Duration, want: Duration, what: &str) {
    let ratio = got.as_secs_f64() / want.as_secs_f64();
    assert!(
        (0.85..=1.15).contains(&ratio),
        "{what}: got {got:?}, want {want:?}"
    );
}

#[test]
fn lognormal_median_and_p99() {
    let spec = parse("lognormal(20ms,200ms)");
    let mut rng = StdRng::seed_from_u64(7);
    let mut samples: Vec<Duration> = (0..20_000).map(|_| spec.sample(&mut rng)).collect();
    samples.sort();
    within_15_percent(percentile(&samples, 0.5), ms(20), "median");
    within_15_percent(percentile(&samples, 0.99), ms(200), "p99");
}

#[test]
fn fixed_and_uniform_sampling() {
    let mut rng = StdRng::seed_from_u64(1);
    assert_eq!(DelaySpec::None.sample(&mut rng), Duration::ZERO);
    assert_eq!(DelaySpec::Fixed(ms(7)).sample(&mut rng), ms(7));
    let spec = DelaySpec::Uniform(ms(10), ms(30));
    let samples: Vec<Duration> = (0..2000).map(|_| spec.sample(&mut rng)).collect();
    assert!(samples.iter().all(|d| (ms(10)..=ms(30)).contains(d)));
    assert!(samples.iter().any(|d| *d < ms(12)) && samples.iter().any(|d| *d > ms(28)));
    // Values that fail validation still sample without panicking.
    assert!(DelaySpec::Uniform(ms(30), ms(10)).sample(&mut rng) <= ms(30));
    let bad = DelaySpec::LogNormal {
        median: ms(0),
        p99: ms(0),
    };
    let _ = bad.sample(&mut rng);
}
