//! `serve --check-client`'s report: the verdict in words, what the server
//! saw, the findings with their settings, the expectations; as text, a
//! self-contained HTML page, and JUnit (a case per expectation).
use crate::junit::{JunitCase, JunitSuite};
use poolbench_model::{ClientCheck, ClientWatch};
use std::fmt::Write;

/// The verdict in one sentence.
pub fn client_verdict(c: &ClientCheck) -> String {
    let who = c
        .client
        .as_deref()
        .map(|k| poolbench_analysis::client_lib(k).map_or(k, |l| l.name))
        .unwrap_or("the client");
    match (c.findings.len(), c.met()) {
        _ if c.watch.requests == 0 => "no request arrived: nothing to judge".into(),
        (0, true) => format!("{who} did what a pool should: nothing to change"),
        (0, false) => format!("{who} showed no known fault, but did not do what you expected"),
        (n, _) => format!(
            "{who}: {n} thing(s) to change: {}",
            c.findings
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The rows of what was seen: (label, value).
fn seen(c: &ClientCheck) -> Vec<(&'static str, String)> {
    let w = &c.watch;
    let mut rows = vec![
        ("requests", w.requests.to_string()),
        (
            "connections opened",
            format!(
                "{} ({:.1} requests each)",
                w.connections_opened, c.requests_per_connection
            ),
        ),
        (
            "connections open",
            format!(
                "at most {}, {:.1} on average",
                w.connections_peak, w.connections_mean
            ),
        ),
        ("requests in flight", in_flight(w)),
    ];
    rows.extend(connection_lives(w));
    rows.extend(protocols(w));
    rows
}

/// The requests in flight, as the samples caught them while busy.
fn in_flight(w: &ClientWatch) -> String {
    match w.busy_s > 0.0 {
        true => format!(
            "at most {}, {:.1} on average while busy; {} held {:.0}% of the busy time ({:.1} s)",
            w.in_flight_peak,
            w.in_flight_mean,
            w.in_flight_mode,
            100.0 * w.in_flight_mode_share,
            w.busy_s
        ),
        false => format!(
            "at most {} (each request too brief for the 5 ms samples)",
            w.in_flight_peak
        ),
    }
}

/// The rows of how long connections lived, what ended them, how long they sat idle.
fn connection_lives(w: &ClientWatch) -> [(&'static str, String); 3] {
    let by = &w.ended_by;
    [
        (
            "connection life",
            format!(
                "{:.2} s on average, {:.2} s at most",
                w.connection_life_mean_s, w.connection_life_max_s
            ),
        ),
        (
            "connections ended by",
            format!(
                "client {}, server idle close {}, server request limit {}, server stop {}, reset {}",
                by.client, by.server_idle, by.server_limit, by.server_stop, by.reset
            ),
        ),
        (
            "idle gaps",
            format!(
                "up to {:.2} s between a connection's requests (keep-alive {})",
                w.idle_gap_max_s,
                w.keepalive_timeout_s
                    .map_or("off".into(), |k| format!("{k:.1} s"))
            ),
        ),
    ]
}

/// The rows of HTTP/2, gRPC and TLS, where the client used them.
fn protocols(w: &ClientWatch) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if w.h2_connections > 0 {
        rows.push((
            "HTTP/2",
            format!(
                "{} connection(s), at most {} at once; at most {} streams on one (the server allows {})",
                w.h2_connections,
                w.h2_connections_peak,
                w.streams_peak,
                w.streams_allowed.map_or("any".into(), |s| s.to_string())
            ),
        ));
    }
    if w.grpc_requests > 0 {
        rows.push(("gRPC calls", w.grpc_requests.to_string()));
    }
    if w.tls_handshakes > 0 {
        rows.push((
            "TLS handshakes",
            format!("{} ({} resumed)", w.tls_handshakes, w.tls_resumed),
        ));
    }
    rows
}

/// The check as text.
pub fn render_client_check_text(c: &ClientCheck) -> String {
    let mut t = String::new();
    let at: Vec<String> = c
        .listeners
        .iter()
        .map(|(k, a)| format!("{k} {a}"))
        .collect();
    let _ = writeln!(
        t,
        "poolbench serve --check-client · {} · {:.1} s watched ({})\n",
        at.join(", "),
        c.watch.watched_s,
        c.ended
    );
    let _ = writeln!(t, "{}\n", client_verdict(c));
    for (k, v) in seen(c) {
        let _ = writeln!(t, "  {k:<22} {v}");
    }
    for f in &c.findings {
        let _ = writeln!(t, "\n{}: {}", f.id, f.title);
        for e in &f.evidence {
            let _ = writeln!(t, "  - {e}");
        }
        if let Some(s) = &f.setting {
            let _ = writeln!(t, "  set: {s}");
        }
    }
    if !c.expectations.is_empty() {
        t.push_str("\nexpected:\n");
        for e in &c.expectations {
            let mark = if e.met { "met" } else { "NOT MET" };
            let _ = writeln!(t, "  {:<28} saw {:<10} {mark}", e.expect, num(e.actual));
        }
    }
    t
}

fn num(x: f64) -> String {
    match x.fract() == 0.0 {
        true => format!("{x:.0}"),
        false => format!("{x:.2}"),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The check as a self-contained HTML page.
pub fn render_client_check_html(c: &ClientCheck) -> String {
    let mut h = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>poolbench: client check</title><style>\
         body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em}\
         td,th{padding:.2em .8em;text-align:left;vertical-align:top}\
         .finding{border-left:4px solid #c60;padding:.2em 1em;margin:1em 0}\
         .met{color:#070}.failed{color:#b00;font-weight:bold}code{background:#eee;padding:0 .2em}\
         </style></head><body>\n",
    );
    let _ = writeln!(h, "<h1>Client check</h1>");
    let _ = writeln!(
        h,
        "<p id=\"verdict\"><strong>{}</strong></p>",
        esc(&client_verdict(c))
    );
    let _ = writeln!(h, "<table id=\"seen\">");
    for (k, v) in seen(c) {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    h.push_str("</table>\n");
    for f in &c.findings {
        let _ = writeln!(
            h,
            "<div class=\"finding\" id=\"{}\"><h2>{}</h2><p>{}</p><ul>",
            f.id,
            f.id,
            esc(&f.title)
        );
        for e in &f.evidence {
            let _ = writeln!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul>");
        if let Some(s) = &f.setting {
            let _ = write!(h, "<p>Set: <code>{}</code></p>", esc(s));
        }
        h.push_str("</div>\n");
    }
    if !c.expectations.is_empty() {
        h.push_str("<h2>Expected</h2><table id=\"expected\">\n");
        for e in &c.expectations {
            let (class, word) = match e.met {
                true => ("met", "met"),
                false => ("failed", "NOT MET"),
            };
            let _ = writeln!(
                h,
                "<tr><td><code>{}</code></td><td>saw {}</td><td class=\"{class}\">{word}</td></tr>",
                esc(&e.expect),
                num(e.actual)
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// The expectations as JUnit cases (one suite).
pub fn client_check_junit(c: &ClientCheck) -> JunitSuite {
    let cases = c
        .expectations
        .iter()
        .map(|e| JunitCase {
            class: "client-check".into(),
            name: e.expect.clone(),
            measured: format!("saw {}", num(e.actual)),
            failure: (!e.met).then(|| format!("expected {}, saw {}", e.expect, num(e.actual))),
            seconds: c.watch.watched_s,
        })
        .collect();
    JunitSuite {
        name: "poolbench serve --check-client".into(),
        started: std::time::SystemTime::now(),
        cases,
    }
}
