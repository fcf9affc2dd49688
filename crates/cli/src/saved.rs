//! A saved result of any kind: a `run` (or merge, scenario step), a
//! `tune`, a `tune --find-rate` or a `serve --check-client`, told apart by
//! their fields, so `report` renders each and `compare` says which kind it
//! was given.
use crate::Failure;
use poolbench_model::{ClientCheck, RateResult, RunResult, TuneResult};
use std::path::Path;

pub(crate) enum Saved {
    Run(Box<RunResult>),
    Tune(Box<TuneResult>),
    Rate(Box<RateResult>),
    Check(Box<ClientCheck>),
}

impl Saved {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Saved::Run(_) => "a run result",
            Saved::Tune(_) => "a tune result",
            Saved::Rate(_) => "a find-rate result",
            Saved::Check(_) => "a client check",
        }
    }
}

/// Read `path` as whichever kind it holds.
pub(crate) fn load(path: &Path) -> Result<Saved, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::input(format!("{} is not JSON: {e}", path.display())))?;
    if value.get("rate_points").is_some() {
        return serde_json::from_value(value)
            .map(|r: RateResult| Saved::Rate(Box::new(r)))
            .map_err(|e| {
                Failure::input(format!("{} is not a find-rate result: {e}", path.display()))
            });
    }
    if value.get("requests_per_connection").is_some() && value.get("ended").is_some() {
        return serde_json::from_value(value)
            .map(|c: ClientCheck| Saved::Check(Box::new(c)))
            .map_err(|e| Failure::input(format!("{} is not a client check: {e}", path.display())));
    }
    let tune = value.get("capacity").is_some() && value.get("points").is_some();
    let parsed = match tune {
        // Read under older names too (`settings` before tune's schema
        // version 2), written under today's.
        true => serde_json::from_value(value).map(|mut t: TuneResult| {
            t.schema_version = poolbench_model::TUNE_SCHEMA_VERSION;
            Saved::Tune(Box::new(t))
        }),
        // Read under older names too (`pitfalls`, `no_recommendation`
        // before schema version 2, the recommendation's `reason` before
        // 3), written under today's.
        false => serde_json::from_value(value).map(|mut r: RunResult| {
            r.schema_version = poolbench_model::SCHEMA_VERSION;
            Saved::Run(Box::new(r))
        }),
    };
    parsed.map_err(|e| {
        let kind = if tune { "tune" } else { "poolbench" };
        Failure::input(format!("{} is not a {kind} result: {e}", path.display()))
    })
}

/// The scheme of a tune's target (`built-in server at http://…` too).
pub(crate) fn tune_scheme(t: &TuneResult) -> String {
    let url = t.target.rsplit(' ').next().unwrap_or(&t.target);
    url.split("://").next().unwrap_or("http").to_string()
}
