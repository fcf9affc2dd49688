//! `census` on hand-built listings: the groups of alike connections and
//! the findings (hoards, over the budget).
use crate::support::limit;
use poolbench_model::{SeenConnection, ServerLimit};

fn seen(app: &str, state: &str, idle_s: f64) -> SeenConnection {
    SeenConnection {
        side: "client".into(),
        client: "10.0.0.7".into(),
        user: "app".into(),
        application: app.into(),
        state: state.into(),
        idle_s: Some(idle_s),
    }
}

#[test]
fn a_census_groups_alike_connections_and_names_hoards_and_overbudget() {
    let mut list: Vec<SeenConnection> = (0..3).map(|_| seen("web", "idle", 2.0)).collect();
    list.push(seen("web", "active", 0.0));
    let lim = ServerLimit {
        max_connections: Some(20),
        reserved: 3,
        ..limit(13)
    };
    let c = poolbench_analysis::census(
        "t".into(),
        "now".into(),
        lim.clone(),
        &list,
        60.0,
        Vec::new(),
    );
    assert_eq!(c.held, 4);
    let web_idle = c.groups.iter().find(|g| g.state == "idle").unwrap();
    assert_eq!((web_idle.count, web_idle.idle_band.as_str()), (3, "<10s"));
    assert!(c.findings.is_empty());
    // 16 of 17 held, 12 idle for 5 min: near the limit and a hoard.
    let mut list: Vec<SeenConnection> = (0..12).map(|_| seen("batch", "idle", 300.0)).collect();
    list.extend((0..4).map(|_| seen("web", "active", 0.0)));
    let c = poolbench_analysis::census("t".into(), "now".into(), lim, &list, 60.0, Vec::new());
    let ids: Vec<&str> = c.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["near-connection-limit", "idle-hoard"]);
    assert!(
        c.findings[1].evidence[0].contains("12 connections idle longer than 60 s"),
        "{:?}",
        c.findings[1]
    );
}
