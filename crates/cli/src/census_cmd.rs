//! `poolbench census TARGET`: the connections a database or pooler holds
//! now, grouped, against its limit (survey_read.rs asks the server;
//! `poolbench_analysis::census` groups and judges). No load.
use crate::census_args::{CensusArgs, CensusFormat};
use crate::Failure;
use poolbench_model::TargetOptions;

pub(crate) fn census(a: CensusArgs) -> Result<(), Failure> {
    let spec = poolbench_targets::parse_target(&a.target).map_err(Failure::input)?;
    let options = TargetOptions {
        cacert: a.cacert.clone(),
        ..TargetOptions::default()
    };
    let survey =
        crate::survey_read::read(&spec, &options, a.connect_timeout)?.ok_or_else(|| {
            Failure::input(format!(
                "census reads databases and poolers (postgres://, mysql://, redis://), not {}://",
                spec.scheme
            ))
        })?;
    let census = poolbench_analysis::census(
        spec.redacted(),
        poolbench_model::duration::now_rfc3339(),
        survey.limit,
        &survey.seen,
        a.idle_after.as_secs_f64(),
        survey.notes,
    );
    crate::output::emit(&match a.format {
        CensusFormat::Json => {
            serde_json::to_string_pretty(&census).expect("a census serializes") + "\n"
        }
        CensusFormat::Text => poolbench_report::render_census_text(&census),
    });
    Ok(())
}
