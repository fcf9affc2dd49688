//! CPU time of this process (Linux; elsewhere unknown). With the built-in
//! server in-process, its share counts too: both run on the same cores.

/// Thread name prefix of the load runtime's workers.
pub(crate) const LOAD_THREAD: &str = "poolbench-load";

/// User + system CPU seconds this process has used so far.
pub(crate) fn process_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let close = stat.rfind(')')?;
    // After "pid (comm) ", utime and stime are the 12th and 13th fields.
    let fields: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    // USER_HZ is 100 on every Linux architecture poolbench runs on.
    Some((field(11)? + field(12)?) as f64 / 100.0)
}

/// Logical CPUs this process may use.
pub(crate) fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// Busy and total jiffies of all cores together, from /proc/stat.
pub(crate) fn machine_jiffies() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// Share of all cores busy between two `machine_jiffies` readings.
pub(crate) fn busy_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((b0, t0), (b1, t1)) = (before?, after?);
    (t1 > t0).then(|| (b1 - b0) as f64 / (t1 - t0) as f64)
}
