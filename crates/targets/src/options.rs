//! Protocol settings a target may need beyond its URL.
use serde::{Deserialize, Serialize};

/// Settings for the target's protocol, from the command line. Every field
/// has a default, so a plan written before a field existed still loads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetOptions {}
