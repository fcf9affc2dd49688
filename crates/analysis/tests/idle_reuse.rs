//! `idle-reuse-race`: connections the server closed while idle in the
//! pool, met by requests or found at checkout.
use crate::support::{cell, evidence, finding, run};
use poolbench_model::{IdleClosed, IdleReuse, RunResult};

fn closed(count: u64, min_s: f64, max_s: f64) -> IdleClosed {
    IdleClosed {
        count,
        min_idle_us: (min_s * 1e6) as u64,
        max_idle_us: (max_s * 1e6) as u64,
    }
}

fn with(found: IdleClosed, reuse: IdleReuse) -> RunResult {
    run(vec![cell("pool:4", 4)
        .with(|c| {
            c.pool.idle_closed = found;
            c.idle_reuse = reuse;
        })
        .build()])
}

#[test]
fn idle_reuse_race_names_the_servers_idle_close_and_the_setting() {
    let reuse = IdleReuse {
        stale: closed(2, 4.0, 4.1),
        failed: 1,
        alive_idle_max_us: 2_900_000,
    };
    let r = with(closed(10, 3.5, 4.2), reuse);
    assert_eq!(
        evidence(&r, "idle-reuse-race"),
        ["pool:4 c=4: 10 idle connections found closed by the server at checkout (idle 3.5–4.2 s) and reopened; 2 requests sent on a connection the server had closed while idle (idle 4.0–4.1 s): 1 sent again, 1 failed; the server closes idle connections after 2.9–3.5 s (connections idle 2.9 s still worked): keep the client's idle timeout below that (Go IdleConnTimeout, httpx keepalive_expiry, aiohttp keepalive_timeout, reqwest pool_idle_timeout, hackney timeout)"]
    );
    // Found at checkout only, nothing reused alive: an upper bound.
    let only = with(closed(3, 1.0, 1.0), IdleReuse::default());
    assert_eq!(
        evidence(&only, "idle-reuse-race"),
        ["pool:4 c=4: 3 idle connections found closed by the server at checkout (idle 1.0 s) and reopened; the server closes idle connections after at most 1.0 s: keep the client's idle timeout below that (Go IdleConnTimeout, httpx keepalive_expiry, aiohttp keepalive_timeout, reqwest pool_idle_timeout, hackney timeout)"]
    );
}

#[test]
fn no_idle_reuse_race_for_connections_closed_after_a_moment_or_never() {
    // Closed right after use (the last answer said so): not idling.
    assert!(finding(
        &with(closed(5, 0.001, 0.01), IdleReuse::default()),
        "idle-reuse-race"
    )
    .is_none());
    let alive = IdleReuse {
        alive_idle_max_us: 10_000_000,
        ..IdleReuse::default()
    };
    assert!(finding(&with(IdleClosed::default(), alive), "idle-reuse-race").is_none());
    assert!(finding(&run(vec![cell("pool:4", 4).build()]), "idle-reuse-race").is_none());
}
