use thiserror::Error;

/// Why a lease could not be had.
#[derive(Debug, Error)]
pub enum AcquireError<E: std::error::Error + 'static> {
    /// No connection became free within the checkout timeout.
    #[error("checkout timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// A new connection was needed and the connector failed to open it.
    #[error("connect failed: {0}")]
    Connect(#[source] E),
    /// The task already holds a connection from this strategy and would
    /// have waited for another (with `fail_on_nested`).
    #[error(
        "nested checkout: this task already holds one of the {size} connections and would wait \
         for another, which deadlocks once every holder does the same; T tasks each holding up \
         to C connections need at least T×(C−1)+1"
    )]
    NestedCheckout {
        /// The most connections the strategy opens.
        size: usize,
    },
}

impl<E: std::error::Error + 'static> AcquireError<E> {
    /// True for a checkout timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, AcquireError::Timeout(_))
    }

    /// True for a refused nested checkout.
    pub fn is_nested(&self) -> bool {
        matches!(self, AcquireError::NestedCheckout { .. })
    }
}

/// A strategy that cannot be built as asked.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BuildError {
    /// The strategy needs a size and none was given.
    #[error("strategy \"{0}\" needs a size, e.g. {0}:16")]
    MissingSize(String),
    /// `pipeline:NxD` on a protocol whose connector does not pipeline.
    #[error("strategy \"{0}\": this protocol does not pipeline (pipeline:NxD is HTTP/1.1's)")]
    NoPipelining(String),
}
