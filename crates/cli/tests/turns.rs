//! Tests that time what they measure, and tests that load the whole
//! machine, take turns. All tests of one test binary share its process, so
//! without this a scenario's expectations, two runs compared or an
//! outage's throughput before and after could be measured beside two
//! thousand workers, three shards or Chromium. In `alone` every test that
//! makes load takes its turn (one at a time, as each of those files had
//! its binary to itself); in `tests` the timed and heavy ones do, and the
//! rest runs beside them as the test harness schedules it.
use std::sync::Mutex;

/// Held for the length of a turn:
/// `let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());`
/// (a test that failed in its turn does not stop the others' turns).
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
