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
}

impl<E: std::error::Error + 'static> AcquireError<E> {
    /// True for a checkout timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, AcquireError::Timeout(_))
    }
}

/// A strategy name that could not be parsed.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid strategy \"{input}\": {reason}")]
pub struct SpecError {
    pub(crate) input: String,
    pub(crate) reason: String,
}

/// A strategy that cannot be built as asked.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BuildError {
    /// The strategy needs a size and none was given.
    #[error("strategy \"{0}\" needs a size, e.g. {0}:16")]
    MissingSize(String),
}
