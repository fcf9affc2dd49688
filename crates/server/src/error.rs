//! Why a server configuration cannot be used.

/// A configuration value that cannot be used. Every message is one line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A delay string or value that is not usable.
    #[error("invalid delay {input:?}: {reason}")]
    InvalidDelay {
        /// The text (or the display form of the value) that was rejected.
        input: String,
        /// What was wrong with it.
        reason: String,
    },
    /// `fail_rate` outside `[0, 1]` (or NaN).
    #[error("invalid fail_rate {0}: must be between 0 and 1")]
    FailRate(f64),
    /// `body_size` above `MAX_BODY_SIZE`.
    #[error("invalid body_size {0}: at most 67108864 bytes (64 MiB)")]
    BodySize(usize),
    /// `max_inflight` set to 0.
    #[error("invalid max_inflight 0: must be at least 1 when set")]
    MaxInflight,
    /// `max_requests_per_conn` set to 0.
    #[error("invalid max_requests_per_conn 0: must be at least 1 when set")]
    MaxRequestsPerConn,
    /// A stall as long as its period would never end.
    #[error("invalid stall: it must be shorter than stall_every")]
    Stall,
    /// Only one of `tls_cert` and `tls_key` given.
    #[error("tls_cert and tls_key go together: give both or neither")]
    CertKey,
    /// `max_concurrent_streams` set to 0.
    #[error("invalid max_concurrent_streams 0: must be at least 1 when set")]
    MaxConcurrentStreams,
}
