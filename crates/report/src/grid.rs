//! Pool size × concurrency, per sized strategy: req/s and error %.
use crate::format::fmt_rate;
use poolbench_model::RunResult;
use std::fmt::Write;

pub(crate) fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let mut levels: Vec<usize> = result.cells.iter().map(|c| c.concurrency).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut kinds: Vec<&str> = Vec::new();
    for cell in result.cells.iter().filter(|c| c.pool_size.is_some()) {
        let kind = kind_of(&cell.strategy);
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    for kind in kinds {
        let mut rows: Vec<(usize, &str)> = result
            .cells
            .iter()
            .filter(|c| kind_of(&c.strategy) == kind)
            .filter_map(|c| c.pool_size.map(|n| (n, c.strategy.as_str())))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        let _ = writeln!(out, "\n{kind}: req/s (error %) by pool size × concurrency");
        let _ = write!(out, "  {:<18}", "pool \\ c");
        for c in &levels {
            let _ = write!(out, " {:>18}", c);
        }
        out.push('\n');
        for (_, strategy) in rows {
            let _ = write!(out, "  {strategy:<18}");
            for &c in &levels {
                let cell = result
                    .cells
                    .iter()
                    .find(|x| x.strategy == strategy && x.concurrency == c);
                let text = match cell {
                    Some(x) => format!(
                        "{} ({:.1}%)",
                        fmt_rate(x.throughput_rps),
                        x.error_rate() * 100.0
                    ),
                    None => "-".to_string(),
                };
                let _ = write!(out, " {text:>18}");
            }
            out.push('\n');
        }
    }
    out
}

fn kind_of(strategy: &str) -> &str {
    strategy.split(':').next().unwrap_or(strategy)
}
