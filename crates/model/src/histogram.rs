//! Latency histograms as results hold them: HDR histograms of nanoseconds
//! (3 significant figures, auto-resizing, never clipping), encoded as
//! base64 of the V2 format for exact merging, and summarized in µs.
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latencies are recorded in nanoseconds; histograms auto-resize and never
/// clip.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is a valid precision")
}

/// A latency distribution in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    pub stdev: f64,
}

impl Summary {
    /// Summarize a nanosecond histogram in microseconds.
    pub fn of(h: &Histogram<u64>) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Summary {
            count: h.len(),
            p50: us(h.value_at_quantile(0.5)),
            p90: us(h.value_at_quantile(0.9)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
        }
    }
}

/// A histogram as base64 of the HdrHistogram V2 encoding.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .expect("writing to a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// Decode what [`encode_histogram`] wrote.
pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram does not decode: {e:?}"))?;
    h.auto(true);
    Ok(h)
}
