//! The fleet a pool is shared by: the server's own connection limit, read
//! from it without load ([`ServerLimit`]), and the pool per replica for
//! each replica count (`tune --replicas`, [`Fleet`]).
use serde::{Deserialize, Serialize};

/// How many connections a server lets this client open, as it said.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerLimit {
    /// `postgresql`, `mysql`, `redis` or `pgbouncer`.
    pub server: String,
    /// Connections still open to this client: the limit, less the slots
    /// reserved for others and the connections others hold now. `None`:
    /// the server would not say (see `refused`).
    pub connections: Option<u64>,
    /// The configured limit (`max_connections`, `maxclients`,
    /// `max_client_conn`).
    pub max_connections: Option<u64>,
    /// Slots this client cannot use (`superuser_reserved_connections`,
    /// `reserved_connections`).
    #[serde(default)]
    pub reserved: u64,
    /// Connections held by other clients when it was read (this reading's
    /// own left out).
    pub held_by_others: Option<u64>,
    /// Requests the server works on at once behind the connections, where
    /// it says (a pooler's server pool: PgBouncer's `default_pool_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serves_at_once: Option<u64>,
    /// Where the figure came from, in words ("max_connections 100 − 3
    /// reserved − 5 held by others = 92, from pg_settings").
    pub source: String,
    /// What the server refused to tell, and why (no privilege).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

/// The replica counts asked for (`--replicas N` or `MIN..MAX`) and the
/// rolling update's surge (`--surge PCT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Replicas {
    pub min: u32,
    pub max: u32,
    /// Percent of `max` a rolling update may run on top of it.
    pub surge_pct: u32,
}

impl Replicas {
    /// Most replicas that run at once: ⌈max × (1 + surge/100)⌉, as a
    /// Kubernetes Deployment rounds its `maxSurge` up.
    pub fn worst_case(&self) -> u32 {
        let extra = (u64::from(self.max) * u64::from(self.surge_pct)).div_ceil(100);
        self.max.saturating_add(extra as u32)
    }
}

/// The pool per replica for a fleet, and what each replica count holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fleet {
    pub replicas: Replicas,
    /// The server's own limit, read before the search (databases and
    /// poolers; `None` for HTTP and gRPC, or when it was not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_limit: Option<ServerLimit>,
    /// Connections the whole fleet may hold: the least of the service's
    /// healthy in-flight level (its knee, below its cliff) and the
    /// server's limit. `None`: neither is known.
    #[serde(default)]
    pub budget: Option<u64>,
    /// Where the budget came from, in words.
    #[serde(default)]
    pub budget_source: String,
    /// The pool to set in each replica: ⌊budget ÷ worst-case replicas⌋,
    /// never above the single-process pick, at least 1.
    #[serde(default)]
    pub pool_per_replica: Option<u64>,
    /// One row per replica count shown.
    #[serde(default)]
    pub rows: Vec<FleetRow>,
}

/// One replica count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetRow {
    pub replicas: u32,
    /// The rolling update's worst case (`max` plus its surge).
    #[serde(default)]
    pub surge: bool,
    /// Largest pool per replica that keeps this count within the budget
    /// (and never above the single-process pick).
    pub fits_per_replica: Option<u64>,
    /// Connections the fleet holds with `pool_per_replica` in each.
    pub total: Option<u64>,
    /// `total` within the budget.
    pub within_budget: bool,
}
