//! The strategy families `tune` searches, by name: one definition of each
//! family's strategy and of which families multiplex requests on a
//! connection (the client settings and the search's connection counts
//! both ask it).
use crate::StrategySpec;
use std::fmt;
use std::str::FromStr;

/// A family of strategies `tune` sizes (`pool` for `pool:1` … `pool:64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Pool,
    RoundRobin,
    LeastLoaded,
    TakeOrCreate,
    Shared,
    PerRequest,
    Pipeline,
}

impl Family {
    /// Every family `tune` searches.
    pub const ALL: [Family; 7] = [
        Family::Pool,
        Family::RoundRobin,
        Family::LeastLoaded,
        Family::TakeOrCreate,
        Family::Shared,
        Family::PerRequest,
        Family::Pipeline,
    ];

    /// Its name, as strategies and results spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Pool => "pool",
            Family::RoundRobin => "round-robin",
            Family::LeastLoaded => "least-loaded",
            Family::TakeOrCreate => "take-or-create",
            Family::Shared => "shared",
            Family::PerRequest => "per-request",
            Family::Pipeline => "pipeline",
        }
    }

    /// The family of a strategy as a point names it (`pool:24` → `pool`;
    /// `None`: no family tune searches, such as `elastic:4+4`).
    pub fn of(strategy: &str) -> Option<Family> {
        strategy.split(':').next().unwrap_or(strategy).parse().ok()
    }

    /// Whether its connections carry many requests at once (HTTP/2 and
    /// gRPC streams): `shared`, `round-robin`, `least-loaded`.
    pub fn multiplexed(self) -> bool {
        matches!(
            self,
            Family::Shared | Family::RoundRobin | Family::LeastLoaded
        )
    }

    /// The family's strategy, its size filled in later.
    pub fn spec(self) -> StrategySpec {
        match self {
            Family::Pool => StrategySpec::Pool(None),
            Family::RoundRobin => StrategySpec::RoundRobin(None),
            Family::LeastLoaded => StrategySpec::LeastLoaded(None),
            Family::TakeOrCreate => StrategySpec::TakeOrCreate(None),
            Family::Shared => StrategySpec::Shared,
            Family::PerRequest => StrategySpec::PerRequest,
            Family::Pipeline => StrategySpec::Pipeline(None, None),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no family tune searches.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tune searches the families {list}, not {0}", list = names())]
pub struct NoFamily(pub String);

fn names() -> String {
    let all: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
    format!(
        "{} and {}",
        all[..all.len() - 1].join(", "),
        all[all.len() - 1]
    )
}

impl FromStr for Family {
    type Err = NoFamily;

    fn from_str(s: &str) -> Result<Family, NoFamily> {
        Family::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| NoFamily(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::Family;

    #[test]
    fn each_family_reads_back_and_names_its_own_strategy() {
        for f in Family::ALL {
            assert_eq!(f.as_str().parse::<Family>(), Ok(f));
            assert_eq!(f.spec().kind(), f.as_str());
            assert_eq!(Family::of(&format!("{f}:8")), Some(f));
        }
        assert_eq!(Family::of("elastic:4+4"), None);
        let err = "bb8".parse::<Family>().unwrap_err().to_string();
        assert_eq!(
            err,
            "tune searches the families pool, round-robin, least-loaded, take-or-create, shared, per-request and pipeline, not bb8"
        );
    }

    #[test]
    fn the_multiplexed_families_are_those_sharing_connections_but_pipelining() {
        for f in Family::ALL {
            let shares = f.spec().shares_connections();
            assert_eq!(f.multiplexed(), shares && f != Family::Pipeline, "{f}");
        }
    }
}
