//! The fleet section of `tune`'s reports (`--replicas`): the pool per
//! replica, where its connection limit came from, and a row per replica count, as
//! text and as HTML.
use crate::format::esc;
use poolbench_model::{Fleet, TuneResult};
use std::fmt::Write;

/// The answer for the fleet, in one sentence.
pub fn fleet_sentence(f: &Fleet) -> String {
    let r = f.replicas;
    let count = match r.min == r.max {
        true => format!("{} replicas", r.max),
        false => format!("{}..{} replicas", r.min, r.max),
    };
    let worst = r.worst_case();
    let surge = match worst > r.max {
        true => format!(
            ", up to {worst} during a rolling update ({}% surge)",
            r.surge_pct
        ),
        false => String::new(),
    };
    match (f.pool_per_replica, f.connection_limit) {
        (Some(p), Some(b)) => format!(
            "For {count}{surge}: set pool size {p} in each replica ({} connections at most, within the fleet's connection limit of {b}: {}).",
            u64::from(worst) * p,
            f.connection_limit_source
        ),
        (Some(p), None) => format!(
            "For {count}{surge}: pool size {p} in each replica; no connection limit is known ({}).",
            f.connection_limit_source
        ),
        _ => format!("For {count}{surge}: no pool per replica ({}).",
            f.connection_limit_source
        ),
    }
}

/// Whether a row is within the connection limit: `unknown` without one.
fn within(f: &Fleet, yes: bool) -> &'static str {
    match (f.connection_limit.is_some(), yes) {
        (false, _) => "unknown",
        (true, true) => "yes",
        (true, false) => "no",
    }
}

fn dash(v: Option<u64>) -> String {
    v.map_or("–".into(), |n| n.to_string())
}

/// The text section, or nothing without `--replicas`.
pub fn fleet_text(r: &TuneResult) -> String {
    let Some(f) = &r.fleet else {
        return String::new();
    };
    let mut t = String::new();
    let _ = writeln!(t, "Fleet (--replicas):\n  {}", fleet_sentence(f));
    if let Some(l) = &f.server_limit {
        let _ = writeln!(t, "  server limit: {}", l.source);
        for why in &l.refused {
            let _ = writeln!(t, "  the server refused: {why}");
        }
    }
    let _ = writeln!(
        t,
        "  {:>8}  {:>16}  {:>11}  within limit",
        "replicas", "fits per replica", "connections"
    );
    for row in &f.rows {
        let _ = writeln!(
            t,
            "  {:>8}  {:>16}  {:>11}  {}{}",
            row.replicas,
            dash(row.fits_per_replica),
            dash(row.total),
            within(f, row.within_limit),
            if row.surge {
                "  (rolling update's surge)"
            } else {
                ""
            }
        );
    }
    t.push('\n');
    t
}

/// The HTML section, or nothing without `--replicas`.
pub fn fleet_html(r: &TuneResult) -> String {
    let Some(f) = &r.fleet else {
        return String::new();
    };
    let mut h = format!(
        "<h2>The fleet</h2><p id=\"fleet\">{}</p>",
        esc(&fleet_sentence(f))
    );
    if let Some(l) = &f.server_limit {
        let _ = write!(h, "<p class=\"muted\">server limit: {}</p>", esc(&l.source));
    }
    h.push_str("<table id=\"fleet-rows\"><tr><th>replicas</th><th>fits per replica</th><th>connections</th><th>within limit</th></tr>");
    for row in &f.rows {
        let _ = write!(
            h,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            row.replicas,
            if row.surge { " (surge)" } else { "" },
            dash(row.fits_per_replica),
            dash(row.total),
            within(f, row.within_limit)
        );
    }
    h.push_str("</table>\n");
    h
}
