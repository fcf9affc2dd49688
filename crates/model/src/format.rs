//! Numbers as the reports and the analysis's words write them, in one
//! place.

/// `x` rounded to a whole number, with thousands separators (`12,345`).
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if x.round() < 0.0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A duration given in microseconds, in the unit that reads best
/// (`850 µs`, `12.3 ms`, `1.25 s`).
pub fn duration_us(us: f64) -> String {
    let a = us.abs();
    if a < 1_000.0 {
        format!("{us:.0} µs")
    } else if a < 1_000_000.0 {
        format!("{:.1} ms", us / 1_000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

/// Microseconds as milliseconds, one decimal, whatever the size (`12.3 ms`):
/// for evidence lines read side by side.
pub fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}

/// A rate with thousands separators and one decimal below 100.
pub fn rate(rps: f64) -> String {
    if rps < 100.0 {
        return format!("{rps:.1}");
    }
    thousands(rps)
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.5), "1,000");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
        assert_eq!(thousands(-12_345.0), "-12,345");
    }
}
