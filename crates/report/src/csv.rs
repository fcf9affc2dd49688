//! CSV: one row per cell, header included, the cell's main figures.
use poolbench_engine::RunResult;

const HEADER: &str = "strategy,concurrency,pool_size,connection_cap,model,reps,interrupted,duration_s,requests,ok,errors,error_rate,throughput_rps,latency_mean_us,latency_p50_us,latency_p90_us,latency_p99_us,latency_p999_us,latency_max_us,checkout_wait_p99_us,request_mean_us,connections_opened,connections_peak_open,resent";

/// The cells as CSV.
pub fn render_csv(result: &RunResult) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    let opt = |v: Option<usize>| v.map(|n| n.to_string()).unwrap_or_default();
    for c in &result.cells {
        let l = &c.latency_us;
        let row = [
            quote(&c.strategy),
            c.concurrency.to_string(),
            opt(c.pool_size),
            opt(c.connection_cap),
            c.model.clone(),
            c.reps.to_string(),
            c.interrupted.to_string(),
            c.duration_s.to_string(),
            c.requests.to_string(),
            c.ok.to_string(),
            c.errors.total.to_string(),
            c.error_rate().to_string(),
            c.throughput_rps.to_string(),
            l.mean.to_string(),
            l.p50.to_string(),
            l.p90.to_string(),
            l.p99.to_string(),
            l.p999.to_string(),
            l.max.to_string(),
            c.checkout_wait_us.p99.to_string(),
            c.request_us.mean.to_string(),
            c.connections.opened.to_string(),
            c.connections.peak_open.to_string(),
            c.resent.to_string(),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn quote(s: &str) -> String {
    match s.contains([',', '"', '\n']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}
