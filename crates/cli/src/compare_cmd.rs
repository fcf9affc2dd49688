//! `poolbench compare BASE.json NEW.json`: two saved results, cell by cell.
use crate::args::{CompareArgs, Format};
use crate::Failure;

pub(crate) fn compare(a: CompareArgs) -> Result<(), Failure> {
    let bounds = match &a.fail_if {
        Some(text) => poolbench_report::parse_bounds(text).map_err(Failure::input)?,
        None => Vec::new(),
    };
    let base = crate::output::load(&a.base)?;
    let new = crate::output::load(&a.new)?;
    let c = poolbench_report::compare(&base, &new);
    if c.cells.is_empty() {
        return Err(Failure::input(format!(
            "no cell of {} matches one of {} (by scheme, strategy, concurrency and pool size)",
            a.base.display(),
            a.new.display()
        )));
    }
    match a.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&c).expect("a comparison serializes")
        ),
        _ => print!("{}", poolbench_report::render_comparison(&c)),
    }
    let crossed = poolbench_report::violations(&c, &bounds);
    if crossed.is_empty() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "--fail-if crossed: {}",
        crossed.join("; ")
    )))
}
