/// A duration given in microseconds, in the unit that reads best.
pub fn fmt_duration_us(us: f64) -> String {
    let a = us.abs();
    if a < 1_000.0 {
        format!("{us:.0} µs")
    } else if a < 1_000_000.0 {
        format!("{:.1} ms", us / 1_000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

/// A rate with thousands separators and one decimal below 100.
pub fn fmt_rate(rps: f64) -> String {
    if rps < 100.0 {
        return format!("{rps:.1}");
    }
    poolbench_model::format::thousands(rps)
}

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
