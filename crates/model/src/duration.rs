//! The one way poolbench reads and writes a duration: humantime text
//! ("250ms", "1m 30s"), with a bare "0" accepted as zero. Every flag,
//! config file and result field that holds a duration goes through here.
use std::time::Duration;

/// `text` as a duration: humantime's units, or "0".
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(text).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

/// `d` as humantime text ("1s 500ms").
pub fn format(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// Serde adapter: a `Duration` as humantime text.
pub mod text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format(*d))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        super::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Serde adapter: an `Option<Duration>` as humantime text, or null.
pub mod opt_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::text::serialize(d, s),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| super::parse(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

// The milliseconds adapters belong to the pool's types (its config
// carries them); the same ones for every result field.
pub use poolbench_pool_types::duration::{millis, opt_millis};

/// Now as RFC 3339 UTC to the second (`2026-11-24T18:00:00Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_units_and_errors() {
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse(" 250ms "), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1m 30s"), Ok(Duration::from_secs(90)));
        assert!(parse("soon").unwrap_err().contains("\"soon\""));
        assert_eq!(
            parse(&format(Duration::from_millis(1500))),
            Ok(Duration::from_millis(1500))
        );
    }
}
