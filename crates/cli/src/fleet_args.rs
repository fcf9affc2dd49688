//! `tune --replicas N|MIN..MAX --surge PCT`: the fleet the pool is for.
use clap::Args;
use poolbench_model::{Fleet, Replicas};

/// A rolling update's surge when none is given: a Kubernetes
/// Deployment's default `maxSurge`.
pub(crate) const DEFAULT_SURGE_PCT: u32 = 25;

#[derive(Args, Debug, Default)]
pub(crate) struct FleetArgs {
    /// The replicas (processes, pods) that each run this pool against the
    /// same service: N, or MIN..MAX for an autoscaled fleet. The answer
    /// then includes the pool per replica: the least of the service's knee
    /// and the server's own connection limit (read from PostgreSQL,
    /// MySQL/MariaDB, Redis or PgBouncer, no load), divided by the most
    /// replicas that run at once.
    #[arg(long, value_name = "N|MIN..MAX", value_parser = parse_replicas)]
    pub(crate) replicas: Option<(u32, u32)>,

    /// How far a rolling update may run over the replicas, in percent of
    /// the largest count: up to ⌈MAX × (1 + PCT/100)⌉ run at once.
    /// [default: 25, a Kubernetes Deployment's maxSurge; 0 for none]
    #[arg(long, value_name = "PCT", requires = "replicas", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub(crate) surge: Option<u32>,
}

fn parse_replicas(s: &str) -> Result<(u32, u32), String> {
    let count = |t: &str| match t.trim().parse::<u32>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a replica count from 1 to 100000, got {t:?}"
        )),
    };
    match s.split_once("..") {
        Some((lo, hi)) => {
            let (lo, hi) = (count(lo)?, count(hi)?);
            match lo <= hi {
                true => Ok((lo, hi)),
                false => Err(format!("{s}: MIN..MAX with MIN at most MAX")),
            }
        }
        None => count(s).map(|n| (n, n)),
    }
}

/// The fleet to size (its server's limit read now, before any load), or
/// `None` without `--replicas`.
/// The fleet `--replicas` names; its server limit is read by the search
/// before any load (`poolbench_tune::Probes::server_limit`).
pub(crate) fn fleet(a: &FleetArgs) -> Option<Fleet> {
    let (min, max) = a.replicas?;
    Some(Fleet {
        replicas: Replicas {
            min,
            max,
            surge_pct: a.surge.unwrap_or(DEFAULT_SURGE_PCT),
        },
        server_limit: None,
        connection_limit: None,
        connection_limit_source: String::new(),
        pool_per_replica: None,
        rows: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_replicas;

    #[test]
    fn replicas_are_a_count_or_a_range() {
        assert_eq!(parse_replicas("4"), Ok((4, 4)));
        assert_eq!(parse_replicas("2..8"), Ok((2, 8)));
        assert!(parse_replicas("8..2").is_err());
        assert!(parse_replicas("0").is_err());
        assert!(parse_replicas("x").is_err());
    }
}
