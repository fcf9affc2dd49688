//! The progress bar over the grid, on stderr, only for a terminal.
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use poolbench_engine::{Events, Live};
use poolbench_model::{CellResult, CellSpec, SkippedCell};
use poolbench_report::fmt_rate;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct Progress {
    bar: ProgressBar,
    live: Option<Arc<Live>>,
}

impl Progress {
    /// A bar over `cells`, hidden when `quiet`; the engine keeps `live` up
    /// to date beside it.
    pub(crate) fn new(cells: usize, quiet: bool, live: Option<Arc<Live>>) -> Progress {
        let bar = ProgressBar::new(cells as u64);
        if quiet || !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        } else {
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells  ETA {eta}  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Progress { bar, live }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Events for Progress {
    fn cell_started(&self, _index: usize, _total: usize, cell: &CellSpec) {
        self.bar.set_message(cell.label());
    }

    fn cell_finished(&self, _index: usize, _total: usize, result: &CellResult) {
        self.bar.inc(1);
        self.bar.println(format!(
            "  {:<22} c={:<5} {:>10} req/s  {:.2}% errors",
            result.strategy,
            result.concurrency,
            fmt_rate(result.throughput_rps),
            result.error_rate() * 100.0
        ));
    }

    fn cell_skipped(&self, _index: usize, _total: usize, skipped: &SkippedCell) {
        self.bar.inc(1);
        self.bar.println(format!(
            "  {:<22} c={:<5} skipped: {}",
            skipped.strategy, skipped.concurrency, skipped.reason
        ));
    }

    fn live(&self) -> Option<&Live> {
        self.live.as_deref()
    }
}
