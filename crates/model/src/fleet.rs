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
    /// The fleet's connection limit: the connections the whole fleet may
    /// hold, the least of the service's healthy in-flight level (its knee,
    /// below its cliff) and the server's limit. `None`: neither is known.
    /// Read as `budget` too (tune's schema version 2).
    #[serde(default, alias = "budget")]
    pub connection_limit: Option<u64>,
    /// Where the connection limit came from, in words (`budget_source`
    /// before tune's schema version 3).
    #[serde(default, alias = "budget_source")]
    pub connection_limit_source: String,
    /// The pool to set in each replica: ⌊limit ÷ worst-case replicas⌋,
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
    /// Largest pool per replica that keeps this count within the
    /// connection limit (and never above the single-process pick).
    pub fits_per_replica: Option<u64>,
    /// Connections the fleet holds with `pool_per_replica` in each.
    pub total: Option<u64>,
    /// `total` within the connection limit (`within_budget` before tune's
    /// schema version 3).
    #[serde(alias = "within_budget")]
    pub within_limit: bool,
}

#[cfg(test)]
mod tests {
    use super::Fleet;

    #[test]
    fn a_fleet_saved_with_a_budget_reads_it_as_the_connection_limit() {
        let old = r#"{"replicas": {"min": 4, "max": 4, "surge_pct": 0},
            "budget": 24, "budget_source": "the service's knee", "pool_per_replica": 6,
            "rows": [{"replicas": 4, "surge": false, "fits_per_replica": 6, "total": 24,
                      "within_budget": true}]}"#;
        let f: Fleet = serde_json::from_str(old).unwrap();
        assert_eq!(f.connection_limit, Some(24));
        assert_eq!(f.connection_limit_source, "the service's knee");
        assert!(f.rows[0].within_limit);
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            json.contains("\"connection_limit\":24") && !json.contains("budget"),
            "{json}"
        );
    }
}
