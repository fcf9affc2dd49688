//! `poolbench compare BASE.json NEW.json`: two saved results of one kind,
//! two runs cell by cell or two tunes figure by figure.
use crate::args::{CompareArgs, Format};
use crate::saved::Saved;
use crate::Failure;
use poolbench_model::{RateResult, RunResult, TuneResult};
use poolbench_report::{Bound, Comparison, FigureComparison};
use std::time::SystemTime;

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
    match (crate::saved::load(&a.base)?, crate::saved::load(&a.new)?) {
        (Saved::Run(b), Saved::Run(n)) => runs(&a, &formats, &bounds, (&b, &n)),
        (Saved::Tune(b), Saved::Tune(n)) => tunes(&a, &formats, &bounds, (&b, &n)),
        (Saved::Rate(b), Saved::Rate(n)) => rates(&a, &formats, &bounds, (&b, &n)),
        (b, n) => Err(Failure::input(format!(
            "compare needs two results of one kind: {} is {} and {} is {}",
            a.base.display(),
            b.kind(),
            a.new.display(),
            n.kind(),
        ))),
    }
}

/// Two runs, cell by cell.
fn runs(
    a: &CompareArgs,
    formats: &[Format],
    bounds: &[Bound],
    (base, new): (&RunResult, &RunResult),
) -> Result<(), Failure> {
    poolbench_report::names_apply(bounds, "run").map_err(Failure::input)?;
    let c = poolbench_report::compare(base, new);
    if c.cells.is_empty() {
        return Err(Failure::input(format!(
            "no cell of {} matches one of {} (by scheme, strategy, concurrency and pool size)",
            a.base.display(),
            a.new.display()
        )));
    }
    let now = SystemTime::now();
    let render = |format| render_cells(format, &c, bounds, now);
    finish(a, formats, render, poolbench_report::violations(&c, bounds))
}

/// Two tunes, figure by figure.
fn tunes(
    a: &CompareArgs,
    formats: &[Format],
    bounds: &[Bound],
    (base, new): (&TuneResult, &TuneResult),
) -> Result<(), Failure> {
    poolbench_report::names_apply(bounds, "tune").map_err(Failure::input)?;
    figures(
        a,
        formats,
        bounds,
        poolbench_report::compare_tunes(base, new),
    )
}

fn rates(
    a: &CompareArgs,
    formats: &[Format],
    bounds: &[Bound],
    (base, new): (&RateResult, &RateResult),
) -> Result<(), Failure> {
    poolbench_report::names_apply(bounds, "rate").map_err(Failure::input)?;
    figures(
        a,
        formats,
        bounds,
        poolbench_report::compare_rates(base, new),
    )
}

/// A comparison figure by figure (two tunes, two find-rates), written,
/// printed and checked against the bounds.
fn figures(
    a: &CompareArgs,
    formats: &[Format],
    bounds: &[Bound],
    c: FigureComparison,
) -> Result<(), Failure> {
    let now = SystemTime::now();
    let render = |format| render_figures(format, &c, bounds, now);
    finish(
        a,
        formats,
        render,
        poolbench_report::figure_violations(&c, bounds),
    )
}

fn finish(
    a: &CompareArgs,
    formats: &[Format],
    render: impl Fn(Format) -> String,
    crossed: Vec<String>,
) -> Result<(), Failure> {
    for (path, format) in a.output.iter().zip(formats) {
        crate::output::write_atomic(path, render(*format))
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::output::emit(&render(a.format));
    if crossed.is_empty() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "--fail-if crossed: {}",
        crossed.join("; ")
    )))
}

fn render_cells(format: Format, c: &Comparison, bounds: &[Bound], now: SystemTime) -> String {
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

fn render_figures(
    format: Format,
    c: &FigureComparison,
    bounds: &[Bound],
    now: SystemTime,
) -> String {
    match format {
        Format::Junit => {
            poolbench_report::render_junit(&poolbench_report::figures_junit(c, bounds, now))
        }
        Format::Json => serde_json::to_string_pretty(c).expect("a comparison serializes") + "\n",
        Format::Markdown => poolbench_report::render_figures_markdown(c),
        Format::Html => poolbench_report::render_figures_html(c),
        Format::Text | Format::Csv => poolbench_report::render_figures_text(c),
    }
}
