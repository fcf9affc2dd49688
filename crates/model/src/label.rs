//! The one way a cell is named in progress, tables and findings:
//! `pool:16 c=100`.

/// `{strategy} c={concurrency}`.
pub fn cell_label(strategy: &str, concurrency: usize) -> String {
    format!("{strategy} c={concurrency}")
}
