//! The generator-saturated pitfall: alone in its test binary, so other
//! tests running in parallel do not load the CPU it measures.
mod common;
use common::*;

#[test]
fn generator_saturated_only_when_the_cpu_is() {
    // No delay at c=64: generator and built-in server share the cores.
    let with = quick_run(ServerConfig::default(), "pool:64", &[64], |_| {});
    // 20 ms per request at c=4: the machine idles.
    let without = quick_run(delay("20ms"), "pool:4", &[4], |_| {});
    flagged_only_in("generator-saturated", &with, &without);
}

use poolbench_server::ServerConfig;
