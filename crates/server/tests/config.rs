//! ServerConfig defaults, validation and serde form.

use std::time::Duration;

use poolbench_server::{ConfigError, DelaySpec, ServerConfig};

#[test]
fn defaults() {
    let c = ServerConfig::default();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(c.delay, DelaySpec::None);
    assert_eq!(c.cpu, Duration::ZERO);
    assert_eq!(c.body_size, 13);
    assert_eq!(c.max_inflight, None);
    assert_eq!(c.keepalive_timeout, Duration::from_secs(60));
    assert_eq!(c.max_requests_per_conn, None);
    assert_eq!(c.fail_rate, 0.0);
    c.validate().unwrap();
}

#[test]
fn validate_rejects_bad_knobs() {
    let bad = |f: fn(&mut ServerConfig)| {
        let mut c = ServerConfig::default();
        f(&mut c);
        let err = c.validate().expect_err("should be rejected");
        assert!(!err.to_string().contains('\n'));
        err
    };
    assert_eq!(bad(|c| c.fail_rate = 1.5), ConfigError::FailRate(1.5));
    assert!(matches!(
        bad(|c| c.fail_rate = -0.1),
        ConfigError::FailRate(_)
    ));
    assert!(matches!(
        bad(|c| c.fail_rate = f64::NAN),
        ConfigError::FailRate(_)
    ));
    assert_eq!(
        bad(|c| c.body_size = 64 * 1024 * 1024 + 1),
        ConfigError::BodySize(64 * 1024 * 1024 + 1)
    );
    assert_eq!(bad(|c| c.max_inflight = Some(0)), ConfigError::MaxInflight);
    assert_eq!(
        bad(|c| c.max_requests_per_conn = Some(0)),
        ConfigError::MaxRequestsPerConn
    );
    let err =
        bad(|c| c.delay = DelaySpec::Uniform(Duration::from_millis(9), Duration::from_millis(1)));
    assert!(
        err.to_string()
            .starts_with("invalid delay \"uniform(9ms,1ms)\""),
        "{err}"
    );

    let ok = ServerConfig {
        fail_rate: 1.0,
        body_size: 64 * 1024 * 1024,
        max_inflight: Some(1),
        max_requests_per_conn: Some(1),
        ..ServerConfig::default()
    };
    ok.validate().unwrap();
}

#[test]
fn serde_uses_readable_strings_and_defaults() {
    let json = serde_json::to_value(ServerConfig::default()).unwrap();
    assert_eq!(json["delay"], "none");
    assert_eq!(json["keepalive_timeout"], "1m");
    assert_eq!(json["cpu"], "0s");
    let c: ServerConfig = serde_json::from_str(
        r#"{"delay":"uniform(1ms,2ms)","cpu":"250us","keepalive_timeout":"0","max_inflight":4}"#,
    )
    .unwrap();
    assert_eq!(
        c.delay,
        DelaySpec::Uniform(Duration::from_millis(1), Duration::from_millis(2))
    );
    assert_eq!(c.cpu, Duration::from_micros(250));
    assert_eq!(c.keepalive_timeout, Duration::ZERO);
    assert_eq!(c.max_inflight, Some(4));
    assert_eq!(c.body_size, 13, "missing fields take defaults");
    let err = serde_json::from_str::<ServerConfig>(r#"{"cpu":"fast"}"#).unwrap_err();
    assert!(
        err.to_string().contains("invalid duration \"fast\""),
        "{err}"
    );
}
