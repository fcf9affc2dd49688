//! `delayed-ack`: the answer's last bytes wait for the client's delayed
//! ACK. A server that writes its answer in two writes with Nagle's
//! algorithm on holds the second until the first is acknowledged, and a
//! client with nothing to send acknowledges only when its delayed-ACK
//! timer fires (40 ms on Linux): the first byte comes at once, the last
//! about 40 ms later, whatever the service's own time.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::DelayedAck,
    title: "the answer's last bytes wait for the client's delayed ACK (two writes, Nagle on)",
    find,
};

/// The band of median first-to-last-byte gaps a delayed-ACK timer gives
/// (Linux: 40 ms, up to 200 ms elsewhere), in µs.
const GAP_US: (f64, f64) = (30_000.0, 250_000.0);
/// Least share of the median request time the gap takes.
const GAP_SHARE: f64 = 0.8;
/// Most the median time to first byte may be, as a share of the gap.
const FIRST_SHARE: f64 = 0.25;
/// Largest mean answer body: a two-write answer is small; a larger body's
/// gap is its transfer.
const SMALL_BODY: f64 = 64.0 * 1024.0;

fn find(run: &Run) -> Vec<Evidence> {
    let mut out = Vec::new();
    let small = |c: &&CellResult| c.ok > 0 && c.body_bytes as f64 / c.ok as f64 <= SMALL_BODY;
    for c in run.cells().filter(small) {
        let (Some(first), Some(last)) = (&c.first_byte_us, &c.last_byte_us) else {
            continue;
        };
        let (first, gap) = (first.p50, last.p50);
        let in_band = (GAP_US.0..=GAP_US.1).contains(&gap);
        if in_band && gap >= GAP_SHARE * c.request_us.p50 && first <= FIRST_SHARE * gap {
            out.push(Evidence::cell(
                c,
                format!(
                    "first byte after {} and the last {} later (p50): the server writes its \
                     answer in two writes with Nagle on; the service itself answers in {}; a \
                     client with TCP_QUICKACK or a server with TCP_NODELAY would not wait",
                    ms(first),
                    ms(gap),
                    ms(first)
                ),
            ));
        }
    }
    out
}
