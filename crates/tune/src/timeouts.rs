//! The timeouts set with the pool size: the acquire timeout from the
//! checkout wait measured at the pick, the idle timeout from the server's
//! idle close. Pure functions of the result.
use poolbench_model::{PoolTimeouts, ServerIdle, Slo, TunePoint};

/// The acquire timeout is this many times the checkout wait's p99.9 …
pub const ACQUIRE_HEADROOM: f64 = 2.0;
/// … and at least this, in ms (a wait for a connection being opened, a
/// scheduler's hiccup), unless the SLO's p99 is lower.
pub const ACQUIRE_FLOOR_MS: f64 = 100.0;

/// How long a request may wait for a connection at the pick `p`, ms, and
/// why: `ACQUIRE_HEADROOM` × its checkout wait's p99.9, at least
/// `ACQUIRE_FLOOR_MS`, rounded up to two significant digits, at most the
/// SLO's p99 (a request that waited longer has broken it already).
pub fn acquire_ms(p: &TunePoint, slo: Option<&Slo>) -> Option<(f64, String)> {
    let wait_ms = p.checkout_wait_p999_us? / 1000.0;
    let raw = (ACQUIRE_HEADROOM * wait_ms).max(ACQUIRE_FLOOR_MS);
    let ms = round_up(raw);
    let basis = match wait_ms > 0.05 {
        true => format!(
            "{ACQUIRE_HEADROOM}× the checkout wait's p99.9 at {} ({wait_ms:.1} ms), at least {ACQUIRE_FLOOR_MS} ms",
            p.strategy
        ),
        false => format!(
            "the checkout wait's p99.9 at {} was under 0.05 ms: the floor, {ACQUIRE_FLOOR_MS} ms",
            p.strategy
        ),
    };
    match slo.and_then(|s| s.p99_us).map(|us| us / 1000.0) {
        Some(cap) if cap < ms => {
            Some((cap, format!("{basis}; capped at the SLO's p99 ({cap} ms)")))
        }
        _ => Some((ms, basis)),
    }
}

/// `x` rounded up to two significant digits (137 → 140, 2345 → 2400).
fn round_up(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let step = 10f64.powi((x.log10().floor() as i32) - 1).max(1.0);
    (x / step).ceil() * step
}

/// The client's idle timeout (and max lifetime) below a server that
/// closes idle connections after `server_s`: the smaller of 80% of it and
/// 1 s less, but at least half of it; whole seconds from 10 s, tenths
/// below.
pub fn client_idle_s(server_s: f64) -> f64 {
    let s = (0.8 * server_s).min(server_s - 1.0).max(0.5 * server_s);
    match s >= 10.0 {
        true => s.floor(),
        false => (s * 10.0).floor() / 10.0,
    }
}

/// The timeouts for the pick `p`.
pub fn timeouts(p: &TunePoint, slo: Option<&Slo>, idle: Option<&ServerIdle>) -> PoolTimeouts {
    let acquire = acquire_ms(p, slo);
    PoolTimeouts {
        acquire_ms: acquire.as_ref().map(|a| a.0),
        acquire_basis: acquire.map(|a| a.1),
        idle_s: idle.and_then(|i| i.idle_close_s).map(client_idle_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_to_two_digits() {
        assert_eq!(round_up(137.0), 140.0);
        assert_eq!(round_up(2345.0), 2400.0);
        assert_eq!(round_up(100.0), 100.0);
        assert_eq!(round_up(7.2), 8.0);
    }

    #[test]
    fn idle_below_the_server_with_a_margin() {
        assert_eq!(client_idle_s(3.0), 2.0);
        assert_eq!(client_idle_s(5.0), 4.0);
        assert_eq!(client_idle_s(1.0), 0.5);
        assert_eq!(client_idle_s(28_800.0), 23_040.0);
        assert_eq!(client_idle_s(60.0), 48.0);
    }
}
