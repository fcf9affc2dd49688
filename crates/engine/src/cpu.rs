//! CPU time of the load generator's own threads (Linux; elsewhere unknown).

/// Thread name prefix of the load runtime's workers.
pub(crate) const LOAD_THREAD: &str = "poolbench-load";

/// User + system CPU seconds used so far by the load threads.
pub(crate) fn load_threads_cpu() -> Option<f64> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut ticks = 0u64;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if !stat[open + 1..close].starts_with(LOAD_THREAD) {
            continue;
        }
        // After "pid (comm) ", utime and stime are the 12th and 13th fields.
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        ticks += field(11) + field(12);
    }
    // USER_HZ is 100 on every Linux architecture poolbench runs on.
    Some(ticks as f64 / 100.0)
}
