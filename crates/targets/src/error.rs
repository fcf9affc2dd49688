use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// The kinds errors are counted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The connection was refused.
    Refused,
    /// The connection was reset or closed mid-exchange.
    Reset,
    /// The request (or connect) took longer than its timeout.
    Timeout,
    /// No connection came free within the checkout timeout.
    CheckoutTimeout,
    /// A task holding a connection asked the same pool for another and was
    /// refused rather than left to deadlock (`--fail-on-nested`).
    NestedCheckout,
    /// The server answered with an error status (4xx, 5xx).
    Status,
    /// The answer did not follow the protocol.
    Protocol,
}

impl ErrorKind {
    /// Every kind, in report order.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Refused,
        ErrorKind::Reset,
        ErrorKind::Timeout,
        ErrorKind::CheckoutTimeout,
        ErrorKind::NestedCheckout,
        ErrorKind::Status,
        ErrorKind::Protocol,
    ];

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::CheckoutTimeout => "checkout_timeout",
            ErrorKind::NestedCheckout => "nested_checkout",
            ErrorKind::Status => "status",
            ErrorKind::Protocol => "protocol",
        }
    }

    /// Classify an I/O error.
    pub fn of_io(e: &std::io::Error) -> ErrorKind {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::ConnectionRefused => ErrorKind::Refused,
            K::TimedOut | K::WouldBlock => ErrorKind::Timeout,
            K::InvalidData | K::InvalidInput => ErrorKind::Protocol,
            _ => ErrorKind::Reset,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed connect or exchange.
#[derive(Debug, Error)]
#[error("{kind}: {message}")]
pub struct RequestError {
    /// How it is counted.
    pub kind: ErrorKind,
    /// The connection cannot be used again.
    pub broken: bool,
    /// The request was never sent: it may be retried on a new connection
    /// without being counted as an error.
    pub unsent: bool,
    /// What happened, for people.
    pub message: String,
    /// The protocol's status code, where it gave one (HTTP status, gRPC
    /// status code).
    pub code: Option<u16>,
}

impl RequestError {
    /// An error that leaves the connection unusable.
    pub fn broken(kind: ErrorKind, message: impl fmt::Display) -> Self {
        RequestError {
            kind,
            broken: true,
            unsent: false,
            message: message.to_string(),
            code: None,
        }
    }

    /// An answer that did not follow the protocol; the connection is
    /// unusable.
    pub fn protocol(message: impl fmt::Display) -> Self {
        RequestError::broken(ErrorKind::Protocol, message)
    }

    /// The connection was closed before the request went out: it may be
    /// retried on another connection without being counted.
    pub fn unsent(message: impl fmt::Display) -> Self {
        RequestError {
            unsent: true,
            ..RequestError::broken(ErrorKind::Reset, message)
        }
    }

    /// An error status; the connection stays usable.
    pub fn status(code: u16) -> Self {
        RequestError {
            kind: ErrorKind::Status,
            broken: false,
            unsent: false,
            message: format!("status {code}"),
            code: Some(code),
        }
    }

    /// The same error, carrying a protocol status code.
    pub fn with_code(self, code: u16) -> Self {
        RequestError {
            code: Some(code),
            ..self
        }
    }
}
