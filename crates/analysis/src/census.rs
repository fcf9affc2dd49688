//! `poolbench census`: the connections a server listed, grouped (side,
//! client address, user, application, state, idle-age band), counted
//! against the server's limit, and the findings `near-connection-limit` and
//! `idle-hoard`. A pure function of what was listed.
use crate::findings::{idle_hoard, near_connection_limit, CHECKS};
use poolbench_model::findings::Id;
use poolbench_model::{Census, CensusGroup, Finding, SeenConnection, ServerLimit};
use std::collections::BTreeMap;

/// The idle-age band of a connection idle `s` seconds.
pub fn idle_band(s: Option<f64>) -> &'static str {
    match s {
        None => "unknown",
        Some(s) if s < 10.0 => "<10s",
        Some(s) if s < 60.0 => "10s-60s",
        Some(s) if s < 600.0 => "1-10min",
        Some(_) => ">10min",
    }
}

/// What the server holds: `seen` grouped, against `limit`.
pub fn census(
    target: String,
    taken_at: String,
    limit: ServerLimit,
    seen: &[SeenConnection],
    idle_after_s: f64,
    notes: Vec<String>,
) -> Census {
    let clients = || seen.iter().filter(|c| c.side == "client");
    let held = clients().count() as u64;
    let idle_long = clients()
        .filter(|c| c.state.starts_with("idle") && c.idle_s.is_some_and(|s| s > idle_after_s))
        .count() as u64;
    let mut census = Census {
        target,
        taken_at,
        limit,
        held,
        idle_long,
        idle_after_s,
        groups: groups(seen),
        findings: Vec::new(),
        notes,
    };
    census.findings = findings(&census);
    census
}

fn groups(seen: &[SeenConnection]) -> Vec<CensusGroup> {
    let mut by: BTreeMap<[String; 6], (u64, Option<f64>)> = BTreeMap::new();
    for c in seen {
        let key = [
            c.side.clone(),
            c.client.clone(),
            c.user.clone(),
            c.application.clone(),
            c.state.clone(),
            idle_band(c.idle_s).to_string(),
        ];
        let e = by.entry(key).or_insert((0, None));
        e.0 += 1;
        e.1 = match (e.1, c.idle_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    let mut out: Vec<CensusGroup> = by
        .into_iter()
        .map(
            |([side, client, user, application, state, idle_band], (count, oldest))| CensusGroup {
                side,
                client,
                user,
                application,
                state,
                idle_band,
                count,
                oldest_idle_s: oldest,
            },
        )
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.side.cmp(&b.side)));
    out
}

/// Connections a client may use: the limit less the reserved slots.
fn usable(l: &ServerLimit) -> Option<u64> {
    l.max_connections.map(|m| m.saturating_sub(l.reserved))
}

fn findings(c: &Census) -> Vec<Finding> {
    let mut out = Vec::new();
    let usable = usable(&c.limit);
    if let Some(u) = usable.filter(|&u| near_connection_limit::over(c.held, u)) {
        out.push(finding(
            Id::NearConnectionLimit,
            format!(
                "{} client connections held of the {u} the server allows ({}%, from {:.0}% on): {} left for a new client, fewer than a deploy's surge may open",
                c.held,
                100 * c.held / u.max(1),
                100.0 * near_connection_limit::SHARE,
                u.saturating_sub(c.held)
            ),
        ));
    }
    let of = usable.unwrap_or(c.held);
    if idle_hoard::hoard(c.idle_long, of) {
        let top = c
            .groups
            .iter()
            .filter(|g| g.side == "client" && g.state.starts_with("idle"))
            .max_by_key(|g| g.count)
            .map_or(String::new(), |g| {
                format!(", most from {} ({} {})", g.client, g.user, g.application)
            });
        out.push(finding(
            Id::IdleHoard,
            format!(
                "{} connections idle longer than {:.0} s, {}% of the {of} {}{top}: an idle timeout below {:.0} s (or a smaller minimum idle) in those clients' pools gives them back",
                c.idle_long,
                c.idle_after_s,
                100 * c.idle_long / of.max(1),
                if usable.is_some() { "the server allows" } else { "held" },
                c.idle_after_s
            ),
        ));
    }
    out
}

fn finding(id: Id, line: String) -> Finding {
    let title = CHECKS.iter().find(|c| c.id == id).map_or("", |c| c.title);
    Finding {
        id,
        title: title.to_string(),
        cells: Vec::new(),
        evidence: vec![line],
    }
}
