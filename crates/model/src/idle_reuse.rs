//! Requests that met a connection the server had closed while it sat idle
//! in the client's pool: the idle-reuse race.
use poolbench_pool_types::IdleClosed;
use serde::{Deserialize, Serialize};

/// A cell's reuses of idle connections: those that met a closed
/// connection, and the longest idle after which one still worked. The
/// server's idle close lies between `alive_idle_max_us` and
/// `stale.min_idle_us` (and the pool's `idle_closed`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct IdleReuse {
    /// Requests sent on a reused connection that the server had closed
    /// (end of stream or reset before any answer), with how long the
    /// connection had sat idle before: sent again (`CellResult::resent`)
    /// or failed.
    #[serde(default, skip_serializing_if = "IdleClosed::is_empty")]
    pub stale: IdleClosed,
    /// Of `stale`, those that failed rather than being sent again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// The longest a connection sat idle before a request on it succeeded,
    /// in µs (0: none was reused).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub alive_idle_max_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl IdleReuse {
    pub fn is_empty(&self) -> bool {
        *self == IdleReuse::default()
    }

    /// All of `parts` together.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a IdleReuse>) -> IdleReuse {
        let mut all = IdleReuse::default();
        parts.into_iter().for_each(|p| all.merge(p));
        all
    }

    pub fn merge(&mut self, o: &IdleReuse) {
        self.stale.merge(&o.stale);
        self.failed += o.failed;
        self.alive_idle_max_us = self.alive_idle_max_us.max(o.alive_idle_max_us);
    }
}
