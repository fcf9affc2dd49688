//! `tls-handshake-bound`: on a TLS target, connecting (TCP and the TLS
//! handshake) took a large share of the time requests spent, from the
//! cell's own figures; what a pool or session resumption would save.
use super::check::{ms, Check, Evidence, Run};
use poolbench_model::findings::Id;
use poolbench_model::CellResult;

pub(crate) const CHECK: Check = Check {
    id: Id::TlsHandshakeBound,
    title: "TLS handshakes took a large share of request latency",
    find,
};

/// Connect time, as a share of all latency, at which the finding fires.
const SHARE: f64 = 0.2;

fn find(run: &Run) -> Vec<Evidence> {
    run.cells()
        .filter_map(|c| Some((c, share(c)?)))
        .filter(|(_, s)| *s >= SHARE)
        .map(|(c, s)| Evidence::cell(c, line(run, c, s)))
        .collect()
}

/// Time connecting over time in requests, for a cell that did TLS.
fn share(c: &CellResult) -> Option<f64> {
    c.tls.as_ref().filter(|t| t.handshakes() > 0)?;
    let total = c.latency_us.mean * c.latency_us.count as f64;
    let connecting = c.connect_us.mean * c.connect_us.count as f64;
    (total > 0.0).then(|| (connecting / total).min(1.0))
}

fn line(run: &Run, c: &CellResult, share: f64) -> String {
    let t = c.tls.as_ref().map(|t| (t.full, t.resumed, t.resumption));
    let (full, resumed, resumption) = t.unwrap_or_default();
    let mut line = format!(
        "connecting took {:.0}% of request latency ({} handshakes: {full} full, {resumed} \
         resumed; connect mean {}, latency mean {})",
        share * 100.0,
        full + resumed,
        ms(c.connect_us.mean),
        ms(c.latency_us.mean)
    );
    if let Some(cpu) = c.generator_cpu {
        line.push_str(&format!(
            "; the generator used {:.0}% of the CPU",
            cpu * 100.0
        ));
    }
    let best = run
        .cells()
        .filter(|o| o.concurrency == c.concurrency && o.connections.requests_per_connection > 10.0)
        .max_by(|a, b| a.throughput_rps.total_cmp(&b.throughput_rps));
    match best {
        Some(p) if p.throughput_rps > c.throughput_rps => line.push_str(&format!(
            "; {} kept its connections and served {:.0} req/s against {:.0} ({:.1}x)",
            p.strategy,
            p.throughput_rps,
            c.throughput_rps,
            p.throughput_rps / c.throughput_rps.max(1.0)
        )),
        _ => line.push_str(&format!(
            "; a pool would save up to {} per request",
            ms(c.connect_us.mean * c.connect_us.count as f64 / c.latency_us.count.max(1) as f64)
        )),
    }
    if !resumption {
        line.push_str("; sessions were not resumed (--tls-resume off): resuming skips the certificate and its signature");
    }
    line
}
