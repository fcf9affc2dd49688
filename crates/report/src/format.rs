pub use poolbench_model::format::{duration_us as fmt_duration_us, rate as fmt_rate};

/// Text escaped for HTML (element content and quoted attributes).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_durations_read_well() {
        assert_eq!(fmt_rate(1234567.0), "1,234,567");
        assert_eq!(fmt_rate(999.4), "999");
        assert_eq!(fmt_rate(19.96), "20.0");
        assert_eq!(fmt_duration_us(850.0), "850 µs");
        assert_eq!(fmt_duration_us(41_700.0), "41.7 ms");
        assert_eq!(fmt_duration_us(2_500_000.0), "2.50 s");
    }
}
