//! The findings' ids: one variant each, written as the kebab-case names
//! results have always carried, and the order a report ranks them in.
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// A finding's stable id. In JSON, its kebab-case name (`pool-bound`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    BatchingServer,
    ClientChurn,
    ClientHiddenCap,
    ClientIdleRace,
    ClientSingleConnection,
    ClosedLoopCeiling,
    DelayedAck,
    Errors,
    FewSamples,
    FleetOvercommit,
    GeneratorHiccups,
    GeneratorSaturated,
    HeadOfLine,
    IdleHoard,
    IdleReuseRace,
    MachineBusy,
    NearConnectionLimit,
    NestedCheckout,
    NestedCheckoutStarvation,
    NotAchieved,
    Outage,
    PipelineRefused,
    PoolBeyondClient,
    PoolBound,
    PoolQueueing,
    Reconnects,
    Stall,
    StreamsCapped,
    TargetSaturated,
    TlsHandshakeBound,
    TransactionPooler,
    UnequalCaps,
    /// An id this version does not know, read from a result another
    /// version wrote: kept as written, ranked with the details.
    Other(String),
}

impl Id {
    /// Every id this version finds, in the order of their names.
    pub const ALL: [Id; 32] = [
        Id::BatchingServer,
        Id::ClientChurn,
        Id::ClientHiddenCap,
        Id::ClientIdleRace,
        Id::ClientSingleConnection,
        Id::ClosedLoopCeiling,
        Id::DelayedAck,
        Id::Errors,
        Id::FewSamples,
        Id::FleetOvercommit,
        Id::GeneratorHiccups,
        Id::GeneratorSaturated,
        Id::HeadOfLine,
        Id::IdleHoard,
        Id::IdleReuseRace,
        Id::MachineBusy,
        Id::NearConnectionLimit,
        Id::NestedCheckout,
        Id::NestedCheckoutStarvation,
        Id::NotAchieved,
        Id::Outage,
        Id::PipelineRefused,
        Id::PoolBeyondClient,
        Id::PoolBound,
        Id::PoolQueueing,
        Id::Reconnects,
        Id::Stall,
        Id::StreamsCapped,
        Id::TargetSaturated,
        Id::TlsHandshakeBound,
        Id::TransactionPooler,
        Id::UnequalCaps,
    ];

    /// The kebab-case name, as results and scenario files spell it.
    pub fn as_str(&self) -> &str {
        match self {
            Id::BatchingServer => "batching-server",
            Id::ClientChurn => "client-churn",
            Id::ClientHiddenCap => "client-hidden-cap",
            Id::ClientIdleRace => "client-idle-race",
            Id::ClientSingleConnection => "client-single-connection",
            Id::ClosedLoopCeiling => "closed-loop-ceiling",
            Id::DelayedAck => "delayed-ack",
            Id::Errors => "errors",
            Id::FewSamples => "few-samples",
            Id::FleetOvercommit => "fleet-overcommit",
            Id::GeneratorHiccups => "generator-hiccups",
            Id::GeneratorSaturated => "generator-saturated",
            Id::HeadOfLine => "head-of-line",
            Id::IdleHoard => "idle-hoard",
            Id::IdleReuseRace => "idle-reuse-race",
            Id::MachineBusy => "machine-busy",
            Id::NearConnectionLimit => "near-connection-limit",
            Id::NestedCheckout => "nested-checkout",
            Id::NestedCheckoutStarvation => "nested-checkout-starvation",
            Id::NotAchieved => "not-achieved",
            Id::Outage => "outage",
            Id::PipelineRefused => "pipeline-refused",
            Id::PoolBeyondClient => "pool-beyond-client",
            Id::PoolBound => "pool-bound",
            Id::PoolQueueing => "pool-queueing",
            Id::Reconnects => "reconnects",
            Id::Stall => "stall",
            Id::StreamsCapped => "streams-capped",
            Id::TargetSaturated => "target-saturated",
            Id::TlsHandshakeBound => "tls-handshake-bound",
            Id::TransactionPooler => "transaction-pooler",
            Id::UnequalCaps => "unequal-caps",
            Id::Other(name) => name,
        }
    }

    /// Names an id had before it was renamed, with the id: results and
    /// scenario files that spell the old name are still read as the new
    /// one (CHANGELOG.md).
    pub const RENAMED: [(&'static str, Id); 1] = [("over-budget", Id::NearConnectionLimit)];

    /// The id of `name` (or of its old name, [`Id::RENAMED`]): a known
    /// one, or [`Id::Other`].
    pub fn named(name: &str) -> Id {
        name.parse().unwrap_or_else(|_| Id::Other(name.to_string()))
    }

    /// How much the finding changes the decision, 0 first: those that say
    /// the target or the pool broke, then those that void the comparison,
    /// then those about the measurement itself. `None`: a detail, listed
    /// after the rest.
    pub fn rank(&self) -> Option<usize> {
        Some(match self {
            Id::Errors => 0,
            Id::Outage => 1,
            Id::Stall => 2,
            Id::NestedCheckoutStarvation => 3,
            Id::NestedCheckout => 4,
            Id::ClosedLoopCeiling => 5,
            Id::PoolBound => 6,
            Id::DelayedAck => 7,
            Id::UnequalCaps => 8,
            Id::NotAchieved => 9,
            Id::TargetSaturated => 10,
            Id::GeneratorSaturated => 11,
            Id::MachineBusy => 12,
            Id::StreamsCapped => 13,
            Id::PoolQueueing => 14,
            Id::HeadOfLine => 15,
            Id::PipelineRefused => 16,
            Id::TlsHandshakeBound => 17,
            Id::IdleReuseRace => 18,
            Id::Reconnects => 19,
            Id::ClientHiddenCap => 20,
            Id::ClientSingleConnection => 21,
            Id::ClientIdleRace => 22,
            Id::ClientChurn => 23,
            Id::BatchingServer
            | Id::FewSamples
            | Id::FleetOvercommit
            | Id::GeneratorHiccups
            | Id::IdleHoard
            | Id::NearConnectionLimit
            | Id::PoolBeyondClient
            | Id::TransactionPooler
            | Id::Other(_) => return None,
        })
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no finding's id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown finding `{0}` (one of: {list})", list = known_list())]
pub struct UnknownId(pub String);

fn known_list() -> String {
    Id::ALL
        .iter()
        .map(Id::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Only the ids this version knows: a scenario's expectation or a
/// command line naming another is a mistake to report, not to keep.
impl FromStr for Id {
    type Err = UnknownId;

    fn from_str(s: &str) -> Result<Id, UnknownId> {
        Id::ALL
            .iter()
            .find(|id| id.as_str() == s)
            .or_else(|| {
                Id::RENAMED
                    .iter()
                    .find(|(old, _)| *old == s)
                    .map(|(_, id)| id)
            })
            .cloned()
            .ok_or_else(|| UnknownId(s.to_string()))
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Any string: a result another version wrote may name findings this one
/// does not know, and `report` and `compare` still read it.
impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Id::named(&name))
    }
}

/// The names this version writes.
impl JsonSchema for Id {
    fn schema_name() -> Cow<'static, str> {
        "FindingId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Id::ALL.iter().map(Id::as_str).collect();
        json_schema!({
            "description": "A finding's stable id.",
            "type": "string",
            "enum": names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Id;

    #[test]
    fn names_are_kebab_case_sorted_and_read_back() {
        let names: Vec<&str> = Id::ALL.iter().map(Id::as_str).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        for id in &Id::ALL {
            let name = id.as_str();
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
            assert_eq!(name.parse::<Id>().as_ref(), Ok(id));
            let json = serde_json::to_string(id).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(&serde_json::from_str::<Id>(&json).unwrap(), id);
        }
    }

    #[test]
    fn an_unknown_name_is_kept_when_read_and_refused_when_parsed() {
        let other: Id = serde_json::from_str("\"pool-too-small\"").unwrap();
        assert_eq!(other, Id::Other("pool-too-small".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"pool-too-small\"");
        assert_eq!(other.rank(), None);
        let err = "pool-too-small".parse::<Id>().unwrap_err().to_string();
        assert!(err.starts_with("unknown finding `pool-too-small` (one of: batching-server,"));
        assert!(!err.contains('\n'));
    }

    #[test]
    fn ranks_are_distinct() {
        let mut ranks: Vec<usize> = Id::ALL.iter().filter_map(Id::rank).collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n);
        assert_eq!(Id::Errors.rank(), Some(0));
    }

    /// The place `id` has in [`Id::ALL`], by a match the compiler holds
    /// complete: a variant added to the enum does not compile here until
    /// it is given its place, and the test below then finds it in `ALL`.
    fn place(id: &Id) -> Option<usize> {
        Some(match id {
            Id::BatchingServer => 0,
            Id::ClientChurn => 1,
            Id::ClientHiddenCap => 2,
            Id::ClientIdleRace => 3,
            Id::ClientSingleConnection => 4,
            Id::ClosedLoopCeiling => 5,
            Id::DelayedAck => 6,
            Id::Errors => 7,
            Id::FewSamples => 8,
            Id::FleetOvercommit => 9,
            Id::GeneratorHiccups => 10,
            Id::GeneratorSaturated => 11,
            Id::HeadOfLine => 12,
            Id::IdleHoard => 13,
            Id::IdleReuseRace => 14,
            Id::MachineBusy => 15,
            Id::NearConnectionLimit => 16,
            Id::NestedCheckout => 17,
            Id::NestedCheckoutStarvation => 18,
            Id::NotAchieved => 19,
            Id::Outage => 20,
            Id::PipelineRefused => 21,
            Id::PoolBeyondClient => 22,
            Id::PoolBound => 23,
            Id::PoolQueueing => 24,
            Id::Reconnects => 25,
            Id::Stall => 26,
            Id::StreamsCapped => 27,
            Id::TargetSaturated => 28,
            Id::TlsHandshakeBound => 29,
            Id::TransactionPooler => 30,
            Id::UnequalCaps => 31,
            Id::Other(_) => return None,
        })
    }

    #[test]
    fn all_lists_every_variant_once() {
        for (i, id) in Id::ALL.iter().enumerate() {
            assert_eq!(place(id), Some(i), "{id}");
        }
        assert_eq!(place(&Id::named("no-such-finding")), None);
    }

    #[test]
    fn an_old_name_reads_as_the_id_it_became() {
        for (old, id) in &Id::RENAMED {
            assert!(!Id::ALL.iter().any(|known| known.as_str() == *old));
            assert_eq!(&Id::named(old), id);
            assert_eq!(old.parse::<Id>().as_ref(), Ok(id));
            let read: Id = serde_json::from_str(&format!("\"{old}\"")).unwrap();
            assert_eq!(&read, id);
            assert_eq!(serde_json::to_string(&read).unwrap(), format!("\"{id}\""));
        }
        assert_eq!(Id::named("over-budget"), Id::NearConnectionLimit);
    }
}
