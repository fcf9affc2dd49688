//! `delayed-ack` on both sides of its thresholds, and the first- and
//! last-byte histograms merged exactly.
use crate::support::{base, cell, evidence, run, summary};
use poolbench_analysis::merge;
use poolbench_model::{decode_histogram, encode_histogram, new_histogram, CellResult};

/// A closed-loop cell at c=2 whose requests take `first_ms` to the first
/// byte and `gap_ms` more to the last (medians), the request time their
/// sum, as a Python server writing its answer in two writes gives.
fn two_writes(first_ms: f64, gap_ms: f64) -> CellResult {
    let request_ms = first_ms + gap_ms;
    cell("pool:2", 2)
        .throughput(2000.0 / request_ms)
        .latency_ms(request_ms)
        .no_server()
        .with(|c| {
            // The builder's p50 is 0.95 × the mean.
            c.first_byte_us = Some(summary(c.ok, first_ms * 1000.0 / 0.95, first_ms * 1100.0));
            c.last_byte_us = Some(summary(c.ok, gap_ms * 1000.0 / 0.95, gap_ms * 1100.0));
        })
        .build()
}

#[test]
fn a_small_first_byte_and_a_40_ms_gap_is_the_delayed_ack() {
    // The real case: Python http.server, headers then body, 43.5 ms each.
    let lines = evidence(&run(vec![two_writes(0.3, 43.2)]), "delayed-ack");
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert!(
        line.starts_with("pool:2 c=2: first byte after 0.3 ms and the last 43.2 ms later (p50)"),
        "{line}"
    );
    assert!(
        line.contains("the server writes its answer in two writes with Nagle on"),
        "{line}"
    );
    assert!(
        line.contains("the service itself answers in 0.3 ms"),
        "{line}"
    );
    assert!(
        line.contains("TCP_QUICKACK") && line.contains("TCP_NODELAY"),
        "{line}"
    );
    // A 200 ms timer (other systems) is still in the band.
    assert_eq!(
        evidence(&run(vec![two_writes(1.0, 200.0)]), "delayed-ack").len(),
        1
    );
}

#[test]
fn no_delayed_ack_outside_the_band_or_with_a_slow_first_byte() {
    // A gap below 30 ms: a body that is merely slow to come.
    assert!(evidence(&run(vec![two_writes(0.3, 25.0)]), "delayed-ack").is_empty());
    // A gap above 250 ms: no delayed-ACK timer is that long.
    assert!(evidence(&run(vec![two_writes(0.3, 300.0)]), "delayed-ack").is_empty());
    // The first byte is not well under the gap: the service's own time.
    assert!(evidence(&run(vec![two_writes(12.0, 40.0)]), "delayed-ack").is_empty());
    assert_eq!(
        evidence(&run(vec![two_writes(9.0, 40.0)]), "delayed-ack").len(),
        1
    );
    // The gap is less than 80% of the request time.
    let mut c = two_writes(0.3, 40.0);
    c.request_us.p50 = 60_000.0;
    assert!(evidence(&run(vec![c]), "delayed-ack").is_empty());
    // A large body: its gap is its transfer, not a wait.
    let mut c = two_writes(0.3, 43.2);
    c.body_bytes = c.ok * 512 * 1024;
    assert!(evidence(&run(vec![c]), "delayed-ack").is_empty());
    let mut c = two_writes(0.3, 43.2);
    c.body_bytes = c.ok * 22;
    assert_eq!(evidence(&run(vec![c]), "delayed-ack").len(), 1);
    // A protocol that cannot tell: nothing to read.
    let mut c = two_writes(0.3, 43.2);
    (c.first_byte_us, c.last_byte_us) = (None, None);
    assert!(evidence(&run(vec![c]), "delayed-ack").is_empty());
}

/// A result whose one cell has first- and last-byte histograms of
/// `first_ns` and `last_ns` (one value each).
fn with_bytes(first_ns: &[u64], last_ns: &[u64]) -> poolbench_model::RunResult {
    let mut r = base();
    let encode = |values: &[u64]| {
        let mut h = new_histogram();
        for v in values {
            h.record(*v).expect("in range");
        }
        encode_histogram(&h)
    };
    r.cells[0].histograms.first_byte_ns = encode(first_ns);
    r.cells[0].histograms.last_byte_ns = encode(last_ns);
    r
}

#[test]
fn first_and_last_byte_histograms_merge_exactly() {
    let a = with_bytes(&[1_000_000, 2_000_000], &[40_000_000, 41_000_000]);
    let b = with_bytes(&[3_000_000], &[44_000_000]);
    let m = merge(&[a, b]).expect("the same plan");
    let c = &m.cells[0];
    let first = decode_histogram(&c.histograms.first_byte_ns).expect("decodes");
    let last = decode_histogram(&c.histograms.last_byte_ns).expect("decodes");
    assert_eq!((first.len(), last.len()), (3, 3));
    let (f, l) = (
        c.first_byte_us.expect("summarized"),
        c.last_byte_us.expect("summarized"),
    );
    assert_eq!((f.count, l.count), (3, 3));
    assert!((f.max - 3000.0).abs() < 5.0, "{f:?}");
    assert!((l.p50 - 41_000.0).abs() < 50.0, "{l:?}");
    // An older result without them: the other's histograms stand alone.
    let old = base();
    assert!(old.cells[0].histograms.first_byte_ns.is_empty());
    let m = merge(&[old, with_bytes(&[3_000_000], &[44_000_000])]).expect("the same plan");
    let f = m.cells[0].first_byte_us.expect("the newer result's");
    assert_eq!(f.count, 1);
    // Neither has them: none, and none in the JSON.
    let m = merge(&[base(), base()]).expect("the same plan");
    assert!(m.cells[0].first_byte_us.is_none());
    let json = serde_json::to_string(&m).expect("serializes");
    assert!(!json.contains("first_byte"), "{json}");
}
