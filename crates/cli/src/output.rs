//! Where a result goes: stdout in `--format`, and each `-o FILE` in the
//! format its extension names, written atomically.
use crate::args::{Format, ViewArgs};
use crate::Failure;
use poolbench_model::RunResult;
use std::path::{Path, PathBuf};

/// A result saved by `run -o FILE.json`.
pub(crate) fn load(path: &Path) -> Result<RunResult, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::input(format!("{} is not a poolbench result: {e}", path.display())))
}

/// The format a file's extension names.
pub(crate) fn format_of(path: &Path) -> Result<Format, Failure> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Ok(Format::Json),
        Some("html" | "htm") => Ok(Format::Html),
        Some("csv") => Ok(Format::Csv),
        Some("txt") => Ok(Format::Text),
        Some("md" | "markdown") => Ok(Format::Markdown),
        Some("xml") => Ok(Format::Junit),
        _ => Err(Failure::input(format!(
            "-o {}: the extension names the format: .json, .html, .csv, .md, .txt or .xml (JUnit)",
            path.display()
        ))),
    }
}

/// The result in `format`; text with each cell's spectrum when `views`
/// asks for it.
pub(crate) fn render(format: Format, result: &RunResult, views: &ViewArgs) -> String {
    match format {
        Format::Text if views.latency => {
            let mut text = poolbench_report::render_text(result);
            for cell in &result.cells {
                match poolbench_report::render_spectrum(cell) {
                    Ok(s) => text.push_str(&s),
                    Err(e) => text.push_str(&format!("\n  {}: {e}\n", cell.strategy)),
                }
            }
            text
        }
        Format::Text => poolbench_report::render_text(result),
        Format::Json => poolbench_report::render_json(result) + "\n",
        Format::Html => poolbench_report::render_html(result),
        Format::Csv => poolbench_report::render_csv(result),
        Format::Markdown => poolbench_report::render_markdown(result),
        Format::Junit => poolbench_report::render_junit(&poolbench_report::run_junit(result)),
    }
}

/// Every `-o` names a format and can be written: found out before any
/// load, not after it.
pub(crate) fn check(outputs: &[PathBuf]) -> Result<(), Failure> {
    for path in outputs {
        check_writable(path)?;
        format_of(path)?;
    }
    Ok(())
}

/// `--hdr-log DIR` can hold the logs: created now, before any load.
pub(crate) fn check_hdr_dir(views: &ViewArgs) -> Result<(), Failure> {
    let Some(dir) = &views.hdr_log else {
        return Ok(());
    };
    let bad = |e: std::io::Error| Failure::input(format!("--hdr-log {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(bad)?;
    check_writable(&dir.join("probe.hlog"))
}

/// Each cell's interval log into `--hdr-log DIR`.
pub(crate) fn write_hdr_logs(views: &ViewArgs, result: &RunResult) -> Result<(), Failure> {
    let Some(dir) = &views.hdr_log else {
        return Ok(());
    };
    if !result.config.hdr_intervals {
        return Err(Failure::input(
            "--hdr-log: this result holds no latency per second (its run did not ask for --hdr-log)",
        ));
    }
    for (i, cell) in result.cells.iter().enumerate() {
        let Some(log) = poolbench_report::render_hdr_log(cell) else {
            continue;
        };
        let path = dir.join(poolbench_report::hdr_log_name(i, cell));
        let bytes = log.map_err(Failure::runtime)?;
        write_atomic(&path, &bytes)
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Writes each `-o`.
pub(crate) fn write_all(outputs: &[PathBuf], result: &RunResult) -> Result<(), Failure> {
    for path in outputs {
        let text = render(format_of(path)?, result, &ViewArgs::default());
        write_atomic(path, &text)
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Where `path` is written first: beside it, so the rename is atomic.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

pub(crate) fn check_writable(path: &Path) -> Result<(), Failure> {
    let bad =
        |e: std::io::Error| Failure::input(format!("cannot write -o {}: {e}", path.display()));
    if path.is_dir() {
        return Err(Failure::input(format!(
            "cannot write -o {}: it is a directory",
            path.display()
        )));
    }
    let probe = temp_path(path);
    std::fs::File::create(&probe).map_err(bad)?;
    std::fs::remove_file(&probe).map_err(bad)
}

/// Writes `text` to a temporary file beside `path`, then renames it over
/// `path`: a crash leaves the old file or the whole new one, never half.
pub(crate) fn write_atomic(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `text` to stdout. A reader that went away (`poolbench run … | head`)
/// is not an error of the run: the rest is dropped, and the exit code is
/// the run's own.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `poolbench report SAVED` of a tune or a find-rate: each `-o` written in
/// the format its extension names, then `--format` printed, each by
/// `render` (the result already read again with this version's
/// conclusions).
pub(crate) fn rerender(
    a: &crate::args::ReportArgs,
    render: impl Fn(Format) -> String,
) -> Result<(), Failure> {
    check(&a.output)?;
    let formats = a
        .output
        .iter()
        .map(|p| format_of(p))
        .collect::<Result<Vec<_>, _>>()?;
    for (path, format) in a.output.iter().zip(formats) {
        write_atomic(path, render(format))
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    emit(&render(a.format));
    Ok(())
}
