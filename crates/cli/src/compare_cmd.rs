//! `poolbench compare BASE.json NEW.json`: two saved results, cell by cell.
use crate::args::{CompareArgs, Format};
use crate::saved::Saved;
use crate::Failure;
use poolbench_report::Comparison;

pub(crate) fn compare(a: CompareArgs) -> Result<(), Failure> {
    let bounds = match &a.fail_if {
        Some(text) => poolbench_report::parse_bounds(text).map_err(Failure::input)?,
        None => Vec::new(),
    };
    if a.format == Format::Csv {
        return Err(Failure::input(
            "compare --format: text, json, markdown, html or junit (a comparison has no CSV)",
        ));
    }
    let formats = a
        .output
        .iter()
        .map(|p| match crate::output::format_of(p)? {
            Format::Csv => Err(Failure::input(format!(
                "-o {}: a comparison is written as .txt, .json, .md, .html or .xml (JUnit)",
                p.display()
            ))),
            f => Ok(f),
        })
        .collect::<Result<Vec<_>, _>>()?;
    crate::output::check(&a.output)?;
    let (base, new) = match (crate::saved::load(&a.base)?, crate::saved::load(&a.new)?) {
        (Saved::Run(b), Saved::Run(n)) => (*b, *n),
        (b, n) => {
            return Err(Failure::input(format!(
                "compare needs two run results: {} is {} and {} is {} (a tune is read with poolbench report)",
                a.base.display(),
                b.kind(),
                a.new.display(),
                n.kind(),
            )))
        }
    };
    let c = poolbench_report::compare(&base, &new);
    let now = std::time::SystemTime::now();
    if c.cells.is_empty() {
        return Err(Failure::input(format!(
            "no cell of {} matches one of {} (by scheme, strategy, concurrency and pool size)",
            a.base.display(),
            a.new.display()
        )));
    }
    for (path, format) in a.output.iter().zip(formats) {
        crate::output::write_atomic(path, render(format, &c, &bounds, now))
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::output::emit(&render(a.format, &c, &bounds, now));
    let crossed = poolbench_report::violations(&c, &bounds);
    if crossed.is_empty() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "--fail-if crossed: {}",
        crossed.join("; ")
    )))
}

fn render(
    format: Format,
    c: &Comparison,
    bounds: &[poolbench_report::Bound],
    now: std::time::SystemTime,
) -> String {
    match format {
        Format::Junit => {
            poolbench_report::render_junit(&poolbench_report::comparison_junit(c, bounds, now))
        }
        Format::Json => serde_json::to_string_pretty(c).expect("a comparison serializes") + "\n",
        Format::Markdown => poolbench_report::render_comparison_markdown(c),
        Format::Html => poolbench_report::render_comparison_html(c),
        Format::Text | Format::Csv => poolbench_report::render_comparison(c),
    }
}
