//! Tests that time what they measure, and tests that load the whole
//! machine, take turns: all of this binary's tests share one process, so
//! without this an outage's before-and-after throughput, a signal timed
//! against the grid, a scenario's expectations or two runs compared could
//! be measured beside two thousand workers, three shards or Chromium.
//! Everything else runs beside them as the test harness schedules it.
use std::sync::Mutex;

/// Held for the length of a turn:
/// `let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());`
/// (a test that failed in its turn does not stop the others' turns).
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
