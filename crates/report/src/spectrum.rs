//! HDR views of a cell's latency: wrk2's percentile spectrum for the text
//! report (`--latency`), and HdrHistogram interval logs (`--hdr-log`) that
//! HdrHistogram's own tools read.
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use poolbench_model::{decode_histogram, CellResult};
use std::fmt::Write;
use std::time::{Duration, UNIX_EPOCH};

/// Steps per halving of the distance to 100%, as HdrHistogram prints.
const TICKS_PER_HALF: u32 = 5;

/// The cell's latency as wrk2 prints it: the headline percentiles, then
/// the detailed spectrum (value in ms, percentile, count up to it,
/// 1/(1−percentile)).
pub fn render_spectrum(cell: &CellResult) -> Result<String, String> {
    let h = decode_histogram(&cell.histograms.latency_ns)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n  Latency distribution of {} (HdrHistogram, corrected for coordinated omission where the load is open)",
        cell.label()
    );
    if h.is_empty() {
        out.push_str("    no successful requests\n");
        return Ok(out);
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    for q in [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0] {
        let _ = writeln!(
            out,
            " {q:>8.3}%  {:>10.3}ms",
            ms(h.value_at_quantile(q / 100.0))
        );
    }
    out.push_str("\n  Detailed percentile spectrum:\n");
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.iter_quantiles(TICKS_PER_HALF) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = ms(v.value_iterated_to());
        match q < 1.0 {
            true => {
                let _ = writeln!(
                    out,
                    "{value:>12.3} {q:>14.6} {total:>10} {:>14.2}",
                    1.0 / (1.0 - q)
                );
            }
            false => {
                let _ = writeln!(out, "{value:>12.3} {q:>14.6} {total:>10}");
            }
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
        h.mean() / 1e6,
        h.stdev() / 1e6
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        ms(h.max()),
        h.len()
    );
    let _ = writeln!(out, "#[Buckets = {:>12}]", h.buckets());
    Ok(out)
}

/// The file name of a cell's interval log: its place in the run, strategy
/// and concurrency (`03-pool-10-c50.hlog`).
pub fn hdr_log_name(index: usize, cell: &CellResult) -> String {
    let strategy: String = cell
        .strategy
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '+' {
            true => c,
            false => '-',
        })
        .collect();
    format!("{:02}-{strategy}-c{}.hlog", index + 1, cell.concurrency)
}

/// A cell's latency per second as an HdrHistogram interval log (V2
/// compressed histograms in nanoseconds, max values in ms, as Java's
/// `HistogramLogWriter` writes). `None` when the result holds no
/// intervals (the run did not ask for `--hdr-log`).
pub fn render_hdr_log(cell: &CellResult) -> Option<Result<Vec<u8>, String>> {
    let first = cell.latency_intervals.first()?;
    Some(write_log(cell, first.start_unix_s))
}

fn write_log(cell: &CellResult, base_unix_s: f64) -> Result<Vec<u8>, String> {
    let base = UNIX_EPOCH + Duration::from_secs_f64(base_unix_s.max(0.0));
    let mut buf = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut writer = IntervalLogWriterBuilder::new()
        .add_comment("[Histogram log format version 1.3]")
        .add_comment(&format!("[poolbench: {}, latency in ns]", cell.label()))
        .with_start_time(base)
        .with_base_time(base)
        .with_max_value_divisor(1e6)
        .begin_log_with(&mut buf, &mut serializer)
        .map_err(|e| e.to_string())?;
    for interval in &cell.latency_intervals {
        let h: Histogram<u64> = decode_histogram(&interval.latency_ns)?;
        let start = Duration::from_secs_f64((interval.start_unix_s - base_unix_s).max(0.0));
        writer
            .write_histogram(
                &h,
                start,
                Duration::from_secs_f64(interval.duration_s.max(0.0)),
                None,
            )
            .map_err(|e| format!("cannot write the interval log: {e}"))?;
    }
    drop(writer);
    Ok(buf)
}
