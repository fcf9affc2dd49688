//! `poolbench census`'s text: a sentence (what the server holds, what a
//! new client may still open), the groups, the findings, the notes.
use poolbench_model::Census;
use std::fmt::Write;

fn age(s: Option<f64>) -> String {
    match s {
        None => "–".into(),
        Some(s) if s < 120.0 => format!("{s:.0} s"),
        Some(s) if s < 7200.0 => format!("{:.0} min", s / 60.0),
        Some(s) => format!("{:.1} h", s / 3600.0),
    }
}

/// The census as text.
pub fn render_census_text(c: &Census) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "poolbench census · {}\n", c.target);
    let left = match c.limit.connections {
        Some(n) => format!("; a new client may open {n} more"),
        None => String::new(),
    };
    let _ = writeln!(
        t,
        "{} holds {} client connection(s), {} idle longer than {:.0} s{left}: {}.",
        c.limit.server, c.held, c.idle_long, c.idle_after_s, c.limit.source
    );
    for why in &c.limit.refused {
        let _ = writeln!(t, "The server refused: {why}");
    }
    t.push('\n');
    let _ = writeln!(
        t,
        "  {:>5}  {:<6}  {:<15}  {:<12}  {:<16}  {:<20}  {:<8}  {:>7}",
        "count", "side", "client", "user", "application", "state", "idle", "oldest"
    );
    for g in &c.groups {
        let _ = writeln!(
            t,
            "  {:>5}  {:<6}  {:<15}  {:<12}  {:<16}  {:<20}  {:<8}  {:>7}",
            g.count,
            g.side,
            g.client,
            g.user,
            g.application,
            g.state,
            g.idle_band,
            age(g.oldest_idle_s)
        );
    }
    t.push('\n');
    for f in &c.findings {
        let _ = writeln!(t, "! {}: {}", f.id, f.title);
        for e in &f.evidence {
            let _ = writeln!(t, "    {e}");
        }
    }
    for n in &c.notes {
        let _ = writeln!(t, "note: {n}");
    }
    t
}
