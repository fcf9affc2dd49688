//! Findings about failures: errors, stalls, outages, reconnects, nested
//! checkouts in the client's pool and in the service's database pool.
use crate::support::{cell, evidence, finding, quiet, run};
use poolbench_analysis::{outages, Outage};
use poolbench_model::DbPoolCounters;

#[test]
fn errors_by_kind() {
    let c = cell("pool:4", 4)
        .throughput(970.0)
        .errors("timeout", 20)
        .errors("refused", 10)
        .build();
    let p = finding(&run(vec![c]), "errors").expect("30 of 1000 failed");
    assert_eq!(p.cells, ["pool:4 c=4"]);
    assert_eq!(
        p.evidence,
        ["pool:4 c=4: 3.00% errors (refused 10, timeout 20)"]
    );
    assert!(finding(&run(vec![quiet("pool:4", 4, 970.0)]), "errors").is_none());
    // One is enough.
    let one = cell("pool:4", 4)
        .throughput(999.0)
        .errors("status", 1)
        .build();
    assert_eq!(
        evidence(&run(vec![one]), "errors"),
        ["pool:4 c=4: 0.10% errors (status 1)"]
    );
}

#[test]
fn a_stall_is_reported_with_its_timeouts() {
    let c = cell("pool:4", 4)
        .throughput(500.0)
        .errors("timeout", 4)
        .stall(1.5, 2.0)
        .build();
    assert_eq!(
        evidence(&run(vec![c]), "stall"),
        ["pool:4 c=4: nothing succeeded for 2.0 s from 1.5 s into the measurement; 4 timeouts"]
    );
    assert!(finding(&run(vec![quiet("pool:4", 4, 500.0)]), "stall").is_none());
}

/// 100 ms buckets, two of warm-up: 10 ok each, then `down` buckets of 5
/// failures and none ok, then ok again for two buckets.
fn refused_for(down: usize, kind: &str) -> poolbench_model::CellResult {
    let mut ok = vec![10, 10, 10, 10];
    let mut errors = vec![0, 0, 0, 0];
    ok.extend(std::iter::repeat_n(0, down));
    errors.extend(std::iter::repeat_n(5, down));
    ok.extend([10, 10]);
    errors.extend([0, 0]);
    cell("pool:4", 4)
        .throughput(60.0)
        .errors(kind, 5 * down as u64)
        .timeline(2, &ok, &errors)
        .build()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn an_outage_is_three_buckets_of_failures_only() {
    let o = outages(&refused_for(3, "refused"));
    assert_eq!(o.len(), 1, "{o:?}");
    let Outage {
        from_s,
        to_s,
        failed,
        back_s,
    } = o[0];
    assert!(near(from_s, 0.2) && near(to_s, 0.5), "{o:?}");
    assert_eq!(failed, 15);
    assert!(near(back_s.expect("it came back"), 0.5), "{o:?}");
    assert_eq!(
        evidence(&run(vec![refused_for(3, "refused")]), "outage"),
        ["pool:4 c=4: down from 0.2 s to 0.5 s into the measurement (15 attempts failed, none succeeded), back at 0.5 s; the cell's errors: refused 15"]
    );
    // Two buckets are a blip.
    assert!(outages(&refused_for(2, "refused")).is_empty());
    assert!(finding(&run(vec![refused_for(2, "refused")]), "outage").is_none());
}

#[test]
fn an_outage_needs_the_target_unreachable() {
    // Reset connections count as down; timeouts alone are a frozen target
    // (a stall), error statuses a target that answers.
    assert_eq!(outages(&refused_for(4, "reset")).len(), 1);
    assert!(outages(&refused_for(4, "timeout")).is_empty());
    assert!(outages(&refused_for(4, "status")).is_empty());
}

#[test]
fn an_outage_not_over_by_the_end_of_the_cell() {
    // Down from bucket 2, then nothing at all: the empty tail is the end
    // of the cell, not the outage.
    let c = cell("pool:4", 4)
        .throughput(20.0)
        .errors("refused", 15)
        .timeline(0, &[10, 10, 0, 0, 0, 0, 0], &[0, 0, 5, 5, 5, 0, 0])
        .build();
    let o = outages(&c);
    assert_eq!(o.len(), 1, "{o:?}");
    assert!(near(o[0].from_s, 0.2) && near(o[0].to_s, 0.5), "{o:?}");
    assert_eq!((o[0].failed, o[0].back_s), (15, None));
    assert_eq!(
        evidence(&run(vec![c]), "outage"),
        ["pool:4 c=4: down from 0.2 s to 0.5 s into the measurement (15 attempts failed, none succeeded), not back by the end of the cell; the cell's errors: refused 15"]
    );
}

#[test]
fn an_outage_in_the_warmup_is_not_measured() {
    // The same three failing buckets, all before the measured window.
    let c = cell("pool:4", 4)
        .throughput(20.0)
        .errors("refused", 15)
        .timeline(4, &[0, 0, 0, 10, 10, 10], &[5, 5, 5, 0, 0, 0])
        .build();
    assert!(outages(&c).is_empty());
}

#[test]
fn reconnects_say_who_closed() {
    let c = cell("pool:4", 4)
        .throughput(400.0)
        .with(|c| {
            c.reopened = 9;
            c.pool.closed_broken = 6;
            c.pool.closed_abandoned = 2;
            c.pool.closed_idle = 3;
        })
        .build();
    assert_eq!(
        evidence(&run(vec![c]), "reconnects"),
        ["pool:4 c=4: 9 connections reopened while measuring; closed: 2 by the client after its own request timeouts, 4 by the server (end of stream or reset), 3 by the pool's idle timeout"]
    );
    let quiet_pool = quiet("pool:4", 4, 400.0);
    assert!(finding(&run(vec![quiet_pool]), "reconnects").is_none());
    // Strategies that open a connection per request reopen by design.
    for strategy in ["per-request", "take-or-create:4"] {
        let c = cell(strategy, 4)
            .throughput(400.0)
            .with(|c| c.reopened = 300)
            .build();
        assert!(finding(&run(vec![c]), "reconnects").is_none(), "{strategy}");
    }
    let unexplained = cell("round-robin:2", 4)
        .throughput(400.0)
        .with(|c| c.reopened = 1)
        .build();
    assert_eq!(
        evidence(&run(vec![unexplained]), "reconnects"),
        ["round-robin:2 c=4: 1 connections reopened while measuring; closed: none closed by the client, the server or the pool's limits"]
    );
}

#[test]
fn nested_checkout_in_the_clients_pool() {
    let waits = cell("pool:4", 4)
        .throughput(100.0)
        .with(|c| c.pool.nested_waits = 7)
        .build();
    assert_eq!(
        evidence(&run(vec![waits]), "nested-checkout"),
        ["pool:4 c=4: 7 nested waits, 0 refused (--fail-on-nested); deadlock-free needs a pool of at least c×(2−1)+1 = 5"]
    );
    let refused = cell("pool:4", 4)
        .throughput(100.0)
        .errors("nested_checkout", 3)
        .build();
    assert_eq!(
        evidence(&run(vec![refused]), "nested-checkout"),
        ["pool:4 c=4: 0 nested waits, 3 refused (--fail-on-nested); deadlock-free needs a pool of at least c×(2−1)+1 = 5"]
    );
    assert!(finding(&run(vec![quiet("pool:4", 4, 100.0)]), "nested-checkout").is_none());
}

fn db(size: u64, nested_waits: u64, timeouts: u64) -> DbPoolCounters {
    DbPoolCounters {
        size,
        overflow: 0,
        per_request: 2,
        waits: nested_waits + timeouts,
        timeouts,
        nested_waits,
        peak_in_use: size,
        peak_requests: 4,
        ..DbPoolCounters::default()
    }
}

fn service(db: DbPoolCounters) -> poolbench_model::RunResult {
    run(vec![cell("pool:8", 8)
        .throughput(100.0)
        .db_pool(db)
        .build()])
}

#[test]
fn starvation_in_the_services_database_pool() {
    // 4 requests at once (the server's peak, below c=8), each holding 2:
    // deadlock-free needs 4×(2−1)+1 = 5.
    assert_eq!(
        evidence(&service(db(4, 12, 0)), "nested-checkout-starvation"),
        ["pool:8 c=8: database pool 4+0 = 4 connections, 4 concurrent requests each holding 2: 12 nested waits, 0 checkout timeouts, peak 4 in use; deadlock-free needs T×(C−1)+1 = 4×(2−1)+1 = 5 (the pool is 1 short)"]
    );
    // Nested waits in a pool big enough are harmless.
    assert!(finding(&service(db(5, 12, 0)), "nested-checkout-starvation").is_none());
    // Overflow counts towards the cap.
    let overflow = DbPoolCounters {
        overflow: 1,
        ..db(4, 12, 0)
    };
    assert!(finding(&service(overflow), "nested-checkout-starvation").is_none());
    // Timeouts are starvation whatever the size.
    assert_eq!(
        evidence(&service(db(5, 0, 2)), "nested-checkout-starvation"),
        ["pool:8 c=8: database pool 5+0 = 5 connections, 4 concurrent requests each holding 2: 0 nested waits, 2 checkout timeouts, peak 5 in use; deadlock-free needs T×(C−1)+1 = 4×(2−1)+1 = 5"]
    );
    // One connection per request cannot deadlock on itself.
    let single = DbPoolCounters {
        per_request: 1,
        ..db(2, 12, 3)
    };
    assert!(finding(&service(single), "nested-checkout-starvation").is_none());
    // Without the server's peak, the workers are the requests: 8×1+1 = 9.
    let no_peak = DbPoolCounters {
        peak_requests: 0,
        ..db(8, 1, 0)
    };
    assert!(evidence(&service(no_peak), "nested-checkout-starvation")[0]
        .ends_with("8×(2−1)+1 = 9 (the pool is 1 short)"));
}
