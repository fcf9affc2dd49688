//! How to set a size in the client libraries people use: one line each,
//! shared by tune's recommendation and the adaptive limiter's bounds.
use serde::{Deserialize, Serialize};

/// One client library's setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientSetting {
    pub client: String,
    pub setting: String,
}
