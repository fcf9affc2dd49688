//! `serve --check-client`: the server runs as ever, its clients watched
//! (poolbench_server's `Watch`); this decides when the client has gone,
//! then hands the watch to the analysis and the verdict to the report.
use crate::check_args::{CheckArgs, CheckFormat};
use crate::Failure;
use poolbench_analysis::CheckSetup;
use poolbench_model::{ClientCheck, Expect};
use poolbench_server::{BoundAddrs, Counters, SAMPLE_EVERY};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What a check knows besides the watch.
pub(crate) struct Checker {
    stats: Arc<Counters>,
    client: Option<String>,
    expects: Vec<Expect>,
    listeners: Vec<(String, String)>,
}

impl Checker {
    pub(crate) fn new(stats: Arc<Counters>, a: &CheckArgs, addrs: &BoundAddrs) -> Checker {
        let mut listeners = vec![("http".to_string(), addrs.http.to_string())];
        listeners.extend(addrs.tls.map(|t| ("tls".to_string(), t.to_string())));
        listeners.extend(addrs.grpc.map(|g| ("grpc".to_string(), g.to_string())));
        Checker {
            stats,
            client: a.client.clone(),
            expects: a.expect.clone().map(|e| e.0).unwrap_or_default(),
            listeners,
        }
    }

    /// The verdict on what was seen so far.
    pub(crate) fn check(&self, ended: &str) -> ClientCheck {
        let mut w = self.stats.watch().expect("a check watches").snapshot();
        let st = self.stats.snapshot();
        (w.grpc_requests, w.tls_handshakes, w.tls_resumed) =
            (st.grpc_requests, st.tls_handshakes, st.tls_resumed);
        poolbench_analysis::client_check(
            &w,
            &CheckSetup {
                client: self.client.as_deref(),
                expects: &self.expects,
                listeners: self.listeners.clone(),
                ended,
            },
        )
    }
}

/// Every `-o` names a format this report has and can be written: found
/// out before serving.
pub(crate) fn check_outputs(outputs: &[PathBuf]) -> Result<(), Failure> {
    for path in outputs {
        format_of(path)?;
        crate::output::check_writable(path)?;
    }
    Ok(())
}

fn format_of(path: &Path) -> Result<CheckFormat, Failure> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Ok(CheckFormat::Json),
        Some("html" | "htm") => Ok(CheckFormat::Html),
        Some("txt") => Ok(CheckFormat::Text),
        Some("xml") => Ok(CheckFormat::Junit),
        _ => Err(Failure::input(format!(
            "-o {}: the extension names the format: .json, .html, .txt or .xml (JUnit)",
            path.display()
        ))),
    }
}

fn render(format: CheckFormat, c: &ClientCheck) -> String {
    match format {
        CheckFormat::Text => poolbench_report::render_client_check_text(c),
        CheckFormat::Json => serde_json::to_string_pretty(c).expect("a check serializes") + "\n",
        CheckFormat::Html => poolbench_report::render_client_check_html(c),
        CheckFormat::Junit => {
            poolbench_report::render_junit(&[poolbench_report::client_check_junit(c)])
        }
    }
}

/// `poolbench report CHECK.json`: a saved check rendered again, as text,
/// JSON, HTML or JUnit.
pub(crate) fn report(c: ClientCheck, a: &crate::args::ReportArgs) -> Result<(), Failure> {
    use crate::args::Format;
    let of = |f: Format| match f {
        Format::Text => Ok(CheckFormat::Text),
        Format::Json => Ok(CheckFormat::Json),
        Format::Html => Ok(CheckFormat::Html),
        Format::Junit => Ok(CheckFormat::Junit),
        Format::Csv | Format::Markdown => Err(Failure::input(
            "a client check is rendered as text, json, html or junit (.txt, .json, .html, .xml)",
        )),
    };
    of(a.format)?;
    for p in &a.output {
        of(crate::output::format_of(p)?)?;
    }
    crate::output::rerender(a, |f| render(of(f).unwrap_or(CheckFormat::Text), &c))
}

/// Samples the watch until the client has gone (`client-gone`), the
/// check timed out (`timeout`) or a signal came (`interrupted`, and the
/// exit code 130/143 set); prints the report so far every
/// `--report-every`.
pub(crate) async fn until_done(a: &CheckArgs, checker: Arc<Checker>) -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return "interrupted";
    };
    let stats = Arc::clone(&checker.stats);
    let watch = stats.watch().expect("a check watches");
    let start = Instant::now();
    let mut quiet_since: Option<Instant> = None;
    let mut next_report = a.report_every.map(|d| start + d);
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = int.recv() => {
                poolbench_engine::interrupt::request(2);
                return "interrupted";
            }
            _ = term.recv() => {
                poolbench_engine::interrupt::request(15);
                return "interrupted";
            }
        }
        watch.sample();
        let now = Instant::now();
        let idle = watch.seen() && stats.snapshot().connections_open == 0 && watch.in_flight() == 0;
        quiet_since = match idle {
            true => quiet_since.or(Some(now)),
            false => None,
        };
        if quiet_since.is_some_and(|q| now - q >= a.client_gone) {
            return "client-gone";
        }
        if now - start >= a.check_timeout {
            return "timeout";
        }
        if let (Some(at), Some(every)) = (next_report, a.report_every) {
            if now >= at && watch.seen() {
                crate::output::emit(&render(a.format, &checker.check("running")));
                next_report = Some(at + every);
            }
        }
    }
}

/// The report, on stdout and in each `-o`; the exit it means.
pub(crate) fn finish(a: &CheckArgs, c: &ClientCheck) -> Result<(), Failure> {
    crate::output::emit(&render(a.format, c));
    for path in &a.output {
        let format = format_of(path)?;
        crate::output::write_atomic(path, render(format, c))
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if c.ended == "interrupted" {
        return Ok(());
    }
    if c.watch.requests == 0 {
        return Err(Failure::runtime(format!(
            "no client came within --check-timeout {}",
            humantime::format_duration(a.check_timeout)
        )));
    }
    let failed: Vec<String> = c
        .expectations
        .iter()
        .filter(|e| !e.met)
        .map(|e| format!("{} (saw {})", e.expect, e.actual))
        .collect();
    match failed.is_empty() {
        true => Ok(()),
        false => Err(Failure::runtime(format!(
            "the client did not do what was expected: {}",
            failed.join(", ")
        ))),
    }
}
