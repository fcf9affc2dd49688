//! The Prometheus text exposition (format 0.0.4) of a live run: one
//! series per cell and metric, the cell as labels (`strategy`,
//! `concurrency`, `pool_size`, `shard`), counters in `_total`, times in
//! seconds, a HELP and a TYPE line per family. Pure: a snapshot in, text
//! out.
use poolbench_model::{LiveCell, LiveCounters, LiveHistogram, LIVE_BOUNDS_NS, LIVE_QUANTILES};
use std::fmt::Write;

/// The content type of the text this renders.
pub const EXPOSITION_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A text exposition being written: families one after another, each
/// with its HELP and TYPE lines before its samples.
#[derive(Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    pub fn new() -> Exposition {
        Exposition::default()
    }

    /// A family's HELP and TYPE lines (`counter`, `gauge`, `histogram`).
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// One sample of the family last declared.
    pub fn sample(&mut self, name: &str, labels: &[(&str, String)], value: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let v = v
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                let _ = write!(self.out, "{k}=\"{v}\"");
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// A sample value as the format writes it.
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        v if v == f64::INFINITY => "+Inf".into(),
        v if v == f64::NEG_INFINITY => "-Inf".into(),
        v => format!("{v}"),
    }
}

/// A cell's labels, on every series of it.
fn cell_labels(c: &LiveCell) -> Vec<(&'static str, String)> {
    let or_none = |v: Option<usize>| v.map_or_else(|| "none".to_string(), |n| n.to_string());
    vec![
        ("strategy", c.strategy.clone()),
        ("concurrency", c.concurrency.to_string()),
        ("pool_size", or_none(c.pool_size)),
        ("shard", or_none(c.shard)),
    ]
}

fn with(
    mut labels: Vec<(&'static str, String)>,
    k: &'static str,
    v: String,
) -> Vec<(&'static str, String)> {
    labels.push((k, v));
    labels
}

/// One value per cell: (name, type, help, the value of a cell).
type PerCell = (
    &'static str,
    &'static str,
    &'static str,
    fn(&LiveCell) -> f64,
);

const SCALARS: [PerCell; 6] = [
    (
        "poolbench_cell_active",
        "gauge",
        "1 while the cell runs, 0 before and after.",
        |c| f64::from(u8::from(c.active)),
    ),
    (
        "poolbench_requests_total",
        "counter",
        "Measured requests completed (successful or not), warm-up excluded.",
        |c| c.requests as f64,
    ),
    (
        "poolbench_late_requests_total",
        "counter",
        "Open loop: measured requests sent more than 1 ms after their intended time.",
        |c| c.late as f64,
    ),
    (
        "poolbench_requests_in_flight",
        "gauge",
        "Requests under way now (checkout included).",
        |c| c.in_flight as f64,
    ),
    (
        "poolbench_connections_open",
        "gauge",
        "Connections the cell's strategy holds open now.",
        |c| c.connections_open as f64,
    ),
    (
        "poolbench_connections_opened_total",
        "counter",
        "Connections the cell's strategy opened, warm-up included.",
        |c| c.connections_opened as f64,
    ),
];

/// The histograms of a cell: (name, help, which).
type PerHistogram = (&'static str, &'static str, fn(&LiveCell) -> &LiveHistogram);

const HISTOGRAMS: [PerHistogram; 4] = [
    ("poolbench_request_duration_seconds", "Measured successful requests' latency: checkout wait plus request (closed loop), from the intended send time (open loop).", |c| &c.latency),
    ("poolbench_checkout_wait_seconds", "Measured successful requests' wait for a connection (or a stream), the connect excluded.", |c| &c.checkout_wait),
    ("poolbench_send_lag_seconds", "Open loop: how long after its intended time each measured request was sent.", |c| &c.send_lag),
    ("poolbench_generator_hiccups_seconds", "How late a thread sleeping 1 ms woke while the cell was measured (the generator's own stalls).", |c| &c.hiccups),
];

/// The exposition of `snapshot`, after a `poolbench_info` gauge with
/// `info`'s labels.
pub fn render_prometheus(snapshot: &LiveCounters, info: &[(&str, String)]) -> String {
    let mut x = Exposition::new();
    x.family(
        "poolbench_info",
        "gauge",
        "poolbench itself: 1, its version and command as labels.",
    );
    x.sample("poolbench_info", info, 1.0);
    for (name, kind, help, value) in SCALARS {
        x.family(name, kind, help);
        for c in &snapshot.cells {
            x.sample(name, &cell_labels(c), value(c));
        }
    }
    x.family(
        "poolbench_errors_total",
        "counter",
        "Measured requests that failed, by kind.",
    );
    for c in &snapshot.cells {
        for (kind, n) in &c.errors {
            x.sample(
                "poolbench_errors_total",
                &with(cell_labels(c), "kind", kind.clone()),
                *n as f64,
            );
        }
    }
    for (name, help, which) in HISTOGRAMS {
        x.family(name, "histogram", help);
        for c in &snapshot.cells {
            histogram(&mut x, name, cell_labels(c), which(c));
        }
    }
    let quantiles = "poolbench_request_duration_quantile_seconds";
    x.family(quantiles, "summary", "Measured successful requests' latency at a quantile over the cell so far, from its HDR histogram (3 significant digits).");
    for c in &snapshot.cells {
        for (q, ns) in LIVE_QUANTILES.iter().zip(c.latency.quantiles_ns) {
            x.sample(
                quantiles,
                &with(cell_labels(c), "quantile", q.to_string()),
                seconds(ns as u128),
            );
        }
        x.sample(
            &format!("{quantiles}_sum"),
            &cell_labels(c),
            seconds(c.latency.sum_ns),
        );
        x.sample(
            &format!("{quantiles}_count"),
            &cell_labels(c),
            c.latency.count as f64,
        );
    }
    x.finish()
}

fn seconds(ns: u128) -> f64 {
    ns as f64 / 1e9
}

/// A histogram's `_bucket`, `_sum` and `_count` series.
fn histogram(
    x: &mut Exposition,
    name: &str,
    labels: Vec<(&'static str, String)>,
    h: &LiveHistogram,
) {
    let bucket = format!("{name}_bucket");
    for (bound, n) in LIVE_BOUNDS_NS.iter().zip(h.at_or_below) {
        let le = seconds(u128::from(*bound)).to_string();
        x.sample(&bucket, &with(labels.clone(), "le", le), n as f64);
    }
    x.sample(
        &bucket,
        &with(labels.clone(), "le", "+Inf".into()),
        h.count as f64,
    );
    x.sample(&format!("{name}_sum"), &labels, seconds(h.sum_ns));
    x.sample(&format!("{name}_count"), &labels, h.count as f64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> LiveCell {
        LiveCell {
            strategy: "pool:4".into(),
            concurrency: 8,
            pool_size: Some(4),
            requests: 10,
            errors: vec![("timeout".into(), 2)],
            latency: LiveHistogram {
                at_or_below: [3; LIVE_BOUNDS_NS.len()],
                count: 3,
                sum_ns: 1_500_000,
                quantiles_ns: [1, 2, 3, 4],
            },
            ..LiveCell::default()
        }
    }

    #[test]
    fn every_series_carries_the_cell_and_histograms_end_in_inf() {
        let text = render_prometheus(
            &LiveCounters {
                cells: vec![cell()],
            },
            &[("version", "0.1.0".into())],
        );
        let labels = r#"strategy="pool:4",concurrency="8",pool_size="4",shard="none""#;
        assert!(
            text.contains(&format!("poolbench_requests_total{{{labels}}} 10\n")),
            "{text}"
        );
        assert!(text.contains(&format!(
            "poolbench_errors_total{{{labels},kind=\"timeout\"}} 2\n"
        )));
        assert!(text.contains(&format!(
            "poolbench_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} 3\n"
        )));
        assert!(text.contains(&format!(
            "poolbench_request_duration_seconds_bucket{{{labels},le=\"0.0001\"}} 3\n"
        )));
        assert!(text.contains(&format!(
            "poolbench_request_duration_seconds_sum{{{labels}}} 0.0015\n"
        )));
        assert!(text.contains("poolbench_info{version=\"0.1.0\"} 1\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(
                line.starts_with("poolbench_info") || line.contains(labels),
                "{line}"
            );
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let mut x = Exposition::new();
        x.family("a_total", "counter", "h");
        x.sample("a_total", &[("k", "q\"b\\\n".into())], 1.5);
        assert_eq!(
            x.finish(),
            "# HELP a_total h\n# TYPE a_total counter\na_total{k=\"q\\\"b\\\\\\n\"} 1.5\n"
        );
    }
}
