//! The verdict of `serve --check-client`: what the server saw of a client
//! (a [`ClientWatch`]), the findings it shows with the setting that
//! changes each in the library named, and the user's `--expect` bounds.
use crate::client_libs::{client_lib, ClientLib, CLIENT_LIBS};
use crate::findings::{
    client_churn, client_hidden_cap, client_idle_race, client_single_connection,
};
use poolbench_model::findings::Id;
use poolbench_model::{
    ClientCheck, ClientFinding, ClientWatch, Expect, ExpectKey, ExpectationResult,
};

/// What the check was told: the library (`--client`), the bounds
/// (`--expect`), where it listened, and why it ended.
pub struct CheckSetup<'a> {
    pub client: Option<&'a str>,
    pub expects: &'a [Expect],
    pub listeners: Vec<(String, String)>,
    pub ended: &'a str,
}

/// The verdict on `w`.
pub fn client_check(w: &ClientWatch, setup: &CheckSetup) -> ClientCheck {
    let lib = setup.client.and_then(client_lib);
    let mut c = ClientCheck {
        ended: setup.ended.to_string(),
        client: setup.client.map(str::to_string),
        listeners: setup.listeners.clone(),
        watch: w.clone(),
        requests_per_connection: match w.connections_opened {
            0 => 0.0,
            n => w.requests as f64 / n as f64,
        },
        findings: Vec::new(),
        expectations: Vec::new(),
    };
    c.expectations = setup
        .expects
        .iter()
        .map(|e| {
            let actual = e.key.of(&c);
            ExpectationResult {
                expect: e.text.clone(),
                actual,
                met: e.holds(actual),
            }
        })
        .collect();
    let single = client_single_connection::single(w);
    let found = [
        hidden_cap(w, lib, setup.expects, single),
        single.then(|| single_connection(w, lib)),
        client_idle_race::races(w).then(|| idle_race(w, lib)),
        client_churn::churns(w).then(|| churn(w, lib)),
    ];
    c.findings = found.into_iter().flatten().collect();
    c
}

fn finding(id: Id, evidence: Vec<String>, setting: Option<String>) -> ClientFinding {
    let title = crate::findings::CHECKS
        .iter()
        .find(|c| c.id == id)
        .map_or("", |c| c.title)
        .to_string();
    ClientFinding {
        id,
        title,
        evidence,
        setting,
    }
}

fn churn(w: &ClientWatch, lib: Option<&ClientLib>) -> ClientFinding {
    let n = w.in_flight_peak.max(1);
    let evidence = vec![
        format!(
            "{} connections for {} requests ({:.1} requests each); {} closed by the client, living {} on average",
            w.connections_opened,
            w.requests,
            w.requests as f64 / w.connections_opened.max(1) as f64,
            w.ended_by.client + w.ended_by.reset,
            secs(w.connection_life_mean_s)
        ),
        format!(
            "at most {} requests in flight and {} connections open at once: {n} kept alive would carry it",
            w.in_flight_peak, w.connections_peak
        ),
    ];
    let setting = match lib {
        Some(l) => (l.keep_alive)(n),
        None => format!("keep connections alive and let the client keep {n} idle (its peak in flight); name the library with --client for its setting"),
    };
    finding(Id::ClientChurn, evidence, Some(setting))
}

/// `client-hidden-cap`: pinned at a library's default, or below what the
/// user expected; not when the pin is the server's streams limit on one
/// connection, or what the user asked for.
fn hidden_cap(
    w: &ClientWatch,
    lib: Option<&ClientLib>,
    expects: &[Expect],
    single: bool,
) -> Option<ClientFinding> {
    let p = client_hidden_cap::pinned(w)?;
    if single {
        return None;
    }
    let asked = expects
        .iter()
        .filter(|e| matches!(e.key, ExpectKey::InFlight | ExpectKey::Pool))
        .any(|e| e.op == "=" && e.value == p as f64);
    let wanted_more = expects
        .iter()
        .find(|e| e.key == ExpectKey::InFlight && matches!(e.op, ">=" | ">") && e.value > p as f64);
    let defaults: Vec<&ClientLib> = match lib {
        Some(l) => vec![l],
        None => CLIENT_LIBS.iter().collect(),
    };
    let whose: Vec<&str> = defaults
        .iter()
        .filter(|l| l.default_cap == Some(p))
        .map(|l| l.name)
        .collect();
    if asked || (whose.is_empty() && wanted_more.is_none()) {
        return None;
    }
    let mut evidence = vec![format!(
        "exactly {p} requests in flight {:.0}% of the busy time ({:.1} s), never more",
        100.0 * w.in_flight_peak_share,
        w.busy_s
    )];
    if !whose.is_empty() {
        evidence.push(format!(
            "{p} is the default limit of {}",
            whose.join(" and ")
        ));
    }
    if let Some(e) = wanted_more {
        evidence.push(format!("you expected {}", e.text));
    }
    let more = wanted_more.map_or(2 * p, |e| e.value.ceil() as u64);
    let setting = match lib {
        Some(l) => (l.cap)(more),
        None if whose.is_empty() => format!(
            "raise the client's limit to {more}; name the library with --client for its setting"
        ),
        None => format!(
            "raise the library's limit ({}); if {p} is yours, say so with --expect in-flight={p}, or name the library with --client",
            whose.join(", ")
        ),
    };
    Some(finding(Id::ClientHiddenCap, evidence, Some(setting)))
}

fn single_connection(w: &ClientWatch, lib: Option<&ClientLib>) -> ClientFinding {
    let s = w.streams_allowed.unwrap_or(w.streams_peak).max(1);
    let evidence = vec![
        format!(
            "{} requests on one HTTP/2 connection at a time; the server allows {s} streams on it",
            w.requests
        ),
        format!(
            "all {s} streams open {:.0}% of the busy time: the requests past {s} waited in the client",
            100.0 * w.streams_at_limit_share
        ),
    ];
    let setting = match lib {
        Some(l) => (l.spread)(2),
        None => format!(
            "open more connections: your concurrent requests ÷ {s}, rounded up; name the library with --client for its setting"
        ),
    };
    finding(Id::ClientSingleConnection, evidence, Some(setting))
}

fn idle_race(w: &ClientWatch, lib: Option<&ClientLib>) -> ClientFinding {
    let k = w.keepalive_timeout_s.unwrap_or(0.0);
    let mut evidence = vec![format!(
        "the server closed {} connection(s) after {} idle, and {} request(s) came after the first of those closes",
        w.ended_by.server_idle,
        secs(k),
        w.requests_after_idle_close
    )];
    evidence.push(format!(
        "a connection sat idle up to {} between its requests; {} request(s) reused one idle for 90% of the timeout or more",
        secs(w.idle_gap_max_s),
        w.late_reuses
    ));
    let ms = (k * 900.0).floor().max(1.0) as u64;
    let setting = match lib {
        Some(l) => (l.idle)(ms),
        None => format!("close idle connections after less than the server's {} (say {ms} ms), or retry an idempotent request once on a reset", secs(k)),
    };
    finding(Id::ClientIdleRace, evidence, Some(setting))
}

fn secs(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{s:.1} s"),
        s => format!("{:.0} ms", s * 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poolbench_model::{parse_expect, EndedBy};

    fn setup<'a>(client: Option<&'a str>, expects: &'a [Expect]) -> CheckSetup<'a> {
        CheckSetup {
            client,
            expects,
            listeners: Vec::new(),
            ended: "client-gone",
        }
    }

    fn ids(c: &ClientCheck) -> Vec<&str> {
        c.findings.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn a_pin_at_a_library_default_is_named_unless_asked_for() {
        let w = ClientWatch {
            requests: 300,
            connections_opened: 100,
            connections_peak: 100,
            in_flight_peak: 100,
            in_flight_mode: 100,
            in_flight_mode_share: 0.95,
            in_flight_peak_share: 0.95,
            busy_s: 0.6,
            ..ClientWatch::default()
        };
        let c = client_check(&w, &setup(Some("aiohttp"), &[]));
        assert_eq!(ids(&c), ["client-hidden-cap"]);
        assert!(c.findings[0]
            .setting
            .as_ref()
            .unwrap()
            .contains("limit=200"));
        let asked = parse_expect("pool=100").unwrap();
        assert!(client_check(&w, &setup(Some("aiohttp"), &asked))
            .findings
            .is_empty());
        // 100 is no default of Go's: pinned, but nothing to name.
        assert!(client_check(&w, &setup(Some("go"), &[]))
            .findings
            .is_empty());
        let more = parse_expect("in-flight>=150").unwrap();
        let c = client_check(&w, &setup(Some("go"), &more));
        assert_eq!(ids(&c), ["client-hidden-cap"]);
        assert!(!c.met());
    }

    #[test]
    fn one_http2_connection_at_its_streams_limit_and_an_idle_race() {
        let single = ClientWatch {
            requests: 200,
            connections_opened: 1,
            connections_peak: 1,
            in_flight_peak: 10,
            in_flight_peak_share: 0.9,
            busy_s: 1.0,
            h2_connections: 1,
            h2_connections_peak: 1,
            streams_peak: 10,
            streams_allowed: Some(10),
            streams_at_limit_share: 0.9,
            ..ClientWatch::default()
        };
        // Pinned at 10 too, but that is the streams limit: one finding.
        let c = client_check(&single, &setup(Some("grpcio"), &[]));
        assert_eq!(ids(&c), ["client-single-connection"]);
        assert!(c.findings[0]
            .setting
            .as_ref()
            .unwrap()
            .contains("use_local_subchannel_pool"));
        let two = ClientWatch {
            h2_connections_peak: 2,
            ..single
        };
        assert!(client_check(&two, &setup(None, &[])).findings.is_empty());
        let mut idle = ClientWatch {
            requests: 3,
            connections_opened: 3,
            keepalive_timeout_s: Some(1.0),
            ended_by: EndedBy {
                server_idle: 2,
                client: 1,
                ..EndedBy::default()
            },
            requests_after_idle_close: 1,
            ..ClientWatch::default()
        };
        let c = client_check(&idle, &setup(Some("httpx"), &[]));
        assert_eq!(ids(&c), ["client-idle-race"]);
        assert!(c.findings[0]
            .setting
            .as_ref()
            .unwrap()
            .contains("keepalive_expiry=0.9"));
        // Closed for idleness at the end, and never back: no race.
        idle.requests_after_idle_close = 0;
        assert!(client_check(&idle, &setup(None, &[])).findings.is_empty());
    }

    #[test]
    fn churn_is_the_clients_not_the_servers() {
        let mut w = ClientWatch {
            requests: 300,
            connections_opened: 240,
            in_flight_peak: 10,
            ended_by: EndedBy {
                client: 238,
                ..EndedBy::default()
            },
            ..ClientWatch::default()
        };
        let c = client_check(&w, &setup(Some("go"), &[]));
        assert_eq!(ids(&c), ["client-churn"]);
        assert!(c.findings[0]
            .setting
            .as_ref()
            .unwrap()
            .contains("MaxIdleConnsPerHost: 10"));
        // Just under half, but 14 times the 10 ever open at once: churn
        // (Go at its defaults read 145 of 300 once); 100 of 300 with 40
        // open at once is not.
        w.connections_opened = 145;
        w.connections_peak = 10;
        w.ended_by.client = 145;
        assert_eq!(
            ids(&client_check(&w, &setup(Some("go"), &[]))),
            ["client-churn"]
        );
        w.connections_opened = 100;
        w.connections_peak = 40;
        w.ended_by.client = 100;
        assert!(client_check(&w, &setup(Some("go"), &[]))
            .findings
            .is_empty());
        // The server closing after each request is not the client's doing.
        w.connections_opened = 240;
        w.ended_by = EndedBy {
            server_limit: 238,
            ..EndedBy::default()
        };
        assert!(client_check(&w, &setup(None, &[])).findings.is_empty());
    }
}
