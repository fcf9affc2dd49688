use serde::{Deserialize, Serialize};

/// The machine a result was measured on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Machine {
    /// Logical CPUs available to the process.
    pub cores: usize,
    /// Operating system and architecture, e.g. `linux x86_64`.
    pub os: String,
    /// Kernel release where known.
    pub kernel: Option<String>,
    /// The poolbench version that measured.
    pub poolbench_version: String,
}

impl Machine {
    /// Describe this machine.
    pub fn current() -> Machine {
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .ok()
                .map(|s| s.trim().to_string()),
            poolbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}
