//! The ids of tune's inferences (its conclusions in words): one variant
//! each, written as the kebab-case names results have always carried, and
//! what each means (`poolbench explain ID`). Three share a finding's name
//! (`closed-loop-ceiling`, `delayed-ack`, `pool-bound`): tune says in words
//! what the finding says of a run.
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// An inference's stable id. In JSON, its kebab-case name (`cliff`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InferenceId {
    Cliff,
    ClosedLoopCeiling,
    DelayedAck,
    PickNearLine,
    PoolBound,
    ReferenceAnswer,
    Retrograde,
    ServesAtOnce,
    SloCrossing,
    SlowConfirmation,
    StreamsPerConnection,
    /// An id this version does not draw, read from a result another
    /// version wrote: kept as written.
    Other(String),
}

impl InferenceId {
    /// Every id this version draws, in the order of their names.
    pub const ALL: [InferenceId; 11] = [
        InferenceId::Cliff,
        InferenceId::ClosedLoopCeiling,
        InferenceId::DelayedAck,
        InferenceId::PickNearLine,
        InferenceId::PoolBound,
        InferenceId::ReferenceAnswer,
        InferenceId::Retrograde,
        InferenceId::ServesAtOnce,
        InferenceId::SloCrossing,
        InferenceId::SlowConfirmation,
        InferenceId::StreamsPerConnection,
    ];

    /// The kebab-case name, as results spell it.
    pub fn as_str(&self) -> &str {
        match self {
            InferenceId::Cliff => "cliff",
            InferenceId::ClosedLoopCeiling => "closed-loop-ceiling",
            InferenceId::DelayedAck => "delayed-ack",
            InferenceId::PickNearLine => "pick-near-line",
            InferenceId::PoolBound => "pool-bound",
            InferenceId::ReferenceAnswer => "reference-answer",
            InferenceId::Retrograde => "retrograde",
            InferenceId::ServesAtOnce => "serves-at-once",
            InferenceId::SloCrossing => "slo-crossing",
            InferenceId::SlowConfirmation => "slow-confirmation",
            InferenceId::StreamsPerConnection => "streams-per-connection",
            InferenceId::Other(name) => name,
        }
    }

    /// The id of `name`: a known one, or [`InferenceId::Other`].
    pub fn named(name: &str) -> InferenceId {
        InferenceId::ALL
            .iter()
            .find(|id| id.as_str() == name)
            .cloned()
            .unwrap_or_else(|| InferenceId::Other(name.to_string()))
    }

    /// What tune concludes when it draws this inference, and from what
    /// (`None`: an id this version does not draw).
    pub fn means(&self) -> Option<&'static str> {
        Some(match self {
            InferenceId::Cliff => {
                "The service failed at some load, its cliff: a point's errors passed the \
                 SLO's bound (1% without one), it stalled with requests in flight, it \
                 answered nothing, fewer than half the requests asked for were being \
                 answered, or its throughput collapsed (below 40% of the best level with at \
                 least half as many in flight, below a tenth of the peak, or below a quarter \
                 of it and half the level under it). Tune says whether the service freezes \
                 (stalls, answers nothing) or fails (errors, a collapse), at how many in \
                 flight, and what the level below it did; no pool at or past it is \
                 recommended."
            }
            InferenceId::ClosedLoopCeiling => {
                "The client's workers, not the pool, set the throughput: each worker waits \
                 for its answer before sending again, so c workers at service time S send at \
                 most c ÷ S whatever the pool. More throughput needs more workers, not more \
                 connections."
            }
            InferenceId::DelayedAck => {
                "The answer waited for the client's acknowledgement (the server's Nagle \
                 algorithm meeting the client's delayed ACK): the latency measured is the \
                 TCP stacks', not the service's, so tune draws no \"serves at once\" from it."
            }
            InferenceId::PickNearLine => {
                "Several pool sizes read within 2% of the line (95% of the reference's \
                 throughput) within their rounds' noise: the smallest pool within 5% is not \
                 sharply placed, and another run may pick a neighbour of this one. Also said \
                 when no size was confirmed and the largest size that read near the line or \
                 above it is answered rather than the reference."
            }
            InferenceId::PoolBound => {
                "At some points the pool, not the service, set the throughput: fewer \
                 connections than workers, throughput about pool ÷ service time, and much of \
                 the latency spent waiting for a connection."
            }
            InferenceId::ReferenceAnswer => {
                "The reference (the client's load, below any cliff) is the answer: no smaller \
                 pool compared with it read within 5% of its throughput, or within 2% of that \
                 line (a size that did, unconfirmed, is answered instead: `pick-near-line`)."
            }
            InferenceId::Retrograde => {
                "Throughput fell, without errors, below 90% of the peak at more in flight \
                 than the peak's: more requests at once make the service slower \
                 (contention, a blocked event loop)."
            }
            InferenceId::ServesAtOnce => {
                "Throughput stopped growing past the knee while latency grew with every \
                 request added: by Little's law the service works on N ≈ X × S requests at \
                 once (X its peak throughput, S the time one request takes alone), and more \
                 than that queue in it. Drawn only on a plateau (a level at least 1.5 times \
                 the knee still at 90% of the peak) where the knee agrees with X × S within \
                 a factor of two."
            }
            InferenceId::SloCrossing => {
                "The p99 latency crossed the SLO's bound at this many in flight: pools that \
                 let more requests in at once break it."
            }
            InferenceId::SlowConfirmation => {
                "The recommended pool read under half the service's peak in the run the \
                 recommendation quotes, while another run of the same pool at the same load \
                 carried at least half of it without failing: the low run was the \
                 machine's (a busy neighbour), not the pool's, so the pick stands, and both \
                 figures are given. A pool low in every run is not recommended."
            }
            InferenceId::StreamsPerConnection => {
                "The server allows this many HTTP/2 streams per connection \
                 (SETTINGS_MAX_CONCURRENT_STREAMS): a multiplexed client needs the requests \
                 in flight ÷ streams connections, and more requests wait in the client."
            }
            InferenceId::Other(_) => return None,
        })
    }
}

impl fmt::Display for InferenceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for InferenceId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Any string: a result another version wrote may carry inferences this
/// one does not draw, and `report` and `compare` still read it.
impl<'de> Deserialize<'de> for InferenceId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<InferenceId, D::Error> {
        let name = String::deserialize(d)?;
        Ok(InferenceId::named(&name))
    }
}

/// The names this version writes.
impl JsonSchema for InferenceId {
    fn schema_name() -> Cow<'static, str> {
        "InferenceId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = InferenceId::ALL.iter().map(InferenceId::as_str).collect();
        json_schema!({
            "description": "An inference's stable id.",
            "type": "string",
            "enum": names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::InferenceId;

    #[test]
    fn names_are_kebab_case_sorted_explained_and_read_back() {
        let names: Vec<&str> = InferenceId::ALL.iter().map(InferenceId::as_str).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        for id in &InferenceId::ALL {
            let name = id.as_str();
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
            assert_eq!(&InferenceId::named(name), id);
            assert!(id.means().is_some_and(|m| m.len() > 40), "{name}");
            let json = serde_json::to_string(id).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(&serde_json::from_str::<InferenceId>(&json).unwrap(), id);
        }
    }

    #[test]
    fn an_unknown_name_is_kept_as_written() {
        let other: InferenceId = serde_json::from_str("\"generator-limit\"").unwrap();
        assert_eq!(other, InferenceId::Other("generator-limit".into()));
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            "\"generator-limit\""
        );
        assert_eq!(other.means(), None);
    }

    /// The place `id` has in [`InferenceId::ALL`], by a match the
    /// compiler holds complete: a variant added to the enum does not
    /// compile here until it is given its place, and the test below then
    /// finds it in `ALL`.
    fn place(id: &InferenceId) -> Option<usize> {
        Some(match id {
            InferenceId::Cliff => 0,
            InferenceId::ClosedLoopCeiling => 1,
            InferenceId::DelayedAck => 2,
            InferenceId::PickNearLine => 3,
            InferenceId::PoolBound => 4,
            InferenceId::ReferenceAnswer => 5,
            InferenceId::Retrograde => 6,
            InferenceId::ServesAtOnce => 7,
            InferenceId::SloCrossing => 8,
            InferenceId::SlowConfirmation => 9,
            InferenceId::StreamsPerConnection => 10,
            InferenceId::Other(_) => return None,
        })
    }

    #[test]
    fn all_lists_every_variant_once() {
        for (i, id) in InferenceId::ALL.iter().enumerate() {
            assert_eq!(place(id), Some(i), "{id}");
        }
        assert_eq!(place(&InferenceId::named("no-such-inference")), None);
    }
}
