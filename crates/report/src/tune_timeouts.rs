//! The timeouts of `tune`'s answer in words: the acquire timeout and what
//! it rests on, the server's idle close and where it came from.
use poolbench_model::{ServerIdle, TuneResult};

/// One line each (none when nothing was found).
pub(crate) fn timeout_lines(r: &TuneResult) -> Vec<String> {
    let mut out = Vec::new();
    let t = r.recommendation.as_ref().and_then(|p| p.timeouts.clone());
    if let Some(t) = &t {
        if let Some(ms) = t.acquire_ms {
            let basis = t.acquire_basis.as_deref().unwrap_or("");
            out.push(format!("acquire timeout {ms} ms: {basis}"));
        }
    }
    if let Some(idle) = &r.server_idle {
        out.push(server_line(idle, t.as_ref().and_then(|t| t.idle_s)));
        for o in &idle.other {
            let value = match o.seconds > 0.0 {
                true => format!("{} s", o.seconds),
                false => "0 (off)".into(),
            };
            out.push(format!("the server's {}: {value}", o.name));
        }
    }
    out
}

fn server_line(idle: &ServerIdle, client_s: Option<f64>) -> String {
    let whence = match (&idle.measured, idle.source.as_str()) {
        (Some(b), _) => match b.closed_s {
            Some(c) => format!(
                "measured: open after {:.2} s idle, closed after {c:.2} s ({} connections)",
                b.open_s, b.connections
            ),
            None => format!("measured on {} connections", b.connections),
        },
        (None, "") => String::new(),
        // A source that names its owner ("the built-in server's …") as is.
        (None, source) if source.starts_with("the ") => source.to_string(),
        (None, source) => format!("its {source}"),
    };
    let note = idle
        .note
        .as_deref()
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    match (idle.idle_close_s, client_s) {
        (Some(s), Some(c)) => format!(
            "idle timeout and max lifetime {c} s: the server closes idle connections after {s} s ({whence}){note}"
        ),
        (Some(s), None) => format!("the server closes idle connections after {s} s ({whence}){note}"),
        (None, _) if whence.is_empty() => format!("the server's idle close: not known{note}"),
        (None, _) => format!("the server's idle close: none found ({whence}){note}"),
    }
}

/// The lines as a text block (`Timeouts:` and one line each), or nothing.
pub(crate) fn block(r: &TuneResult) -> String {
    let lines = timeout_lines(r);
    if lines.is_empty() {
        return String::new();
    }
    let mut t = String::from("Timeouts:\n");
    for l in lines {
        t += &format!("  {l}\n");
    }
    t.push('\n');
    t
}

#[cfg(test)]
mod tests {
    use super::timeout_lines;
    use poolbench_model::{IdleBracket, ServerIdle, ServerTimeout, TuneLoad, TuneResult};

    fn result(idle: ServerIdle) -> TuneResult {
        let mut r = TuneResult::begin(
            "http://x/".into(),
            TuneLoad::Concurrency(2),
            None,
            10.0,
            vec!["pool".into()],
        );
        r.server_idle = Some(idle);
        r
    }

    #[test]
    fn says_the_servers_idle_close_and_where_it_came_from() {
        let measured = result(ServerIdle {
            idle_close_s: Some(3.02),
            source: "measured".into(),
            measured: Some(IdleBracket {
                open_s: 2.98,
                closed_s: Some(3.06),
                connections: 22,
            }),
            ..ServerIdle::default()
        });
        assert_eq!(
            timeout_lines(&measured),
            ["the server closes idle connections after 3.02 s (measured: open after 2.98 s idle, closed after 3.06 s (22 connections))"]
        );
        let read = result(ServerIdle {
            source: "idle_session_timeout".into(),
            other: vec![ServerTimeout {
                name: "idle_in_transaction_session_timeout".into(),
                seconds: 0.0,
            }],
            note: Some("idle_session_timeout is 0".into()),
            ..ServerIdle::default()
        });
        assert_eq!(
            timeout_lines(&read),
            [
                "the server's idle close: none found (its idle_session_timeout); idle_session_timeout is 0",
                "the server's idle_in_transaction_session_timeout: 0 (off)"
            ]
        );
    }
}
