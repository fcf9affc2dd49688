use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// The kinds errors are counted by.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
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
    /// PostgreSQL's SQLSTATE, where the server gave one.
    pub sqlstate: Option<SqlState>,
}

/// A PostgreSQL SQLSTATE: five characters, digits and capital letters
/// (`22012`, `42P05`), its first two the class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// `text` if it is a SQLSTATE.
    pub fn parse(text: &str) -> Option<SqlState> {
        let b: [u8; 5] = text.as_bytes().try_into().ok()?;
        b.iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
            .then_some(SqlState(b))
    }

    pub fn as_str(&self) -> &str {
        // Checked ASCII in `parse`.
        std::str::from_utf8(&self.0).unwrap_or("?????")
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
            sqlstate: None,
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
            sqlstate: None,
        }
    }

    /// A gRPC status other than OK, with its `grpc-message`
    /// (percent-decoded); the connection stays usable.
    pub fn grpc(code: u16, message: &str) -> Self {
        let name = format!("{:?}", tonic::Code::from(i32::from(code)));
        RequestError {
            message: format!("gRPC {name}: {}", percent_decode(message)),
            ..RequestError::status(code)
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

/// `grpc-message` is percent-encoded (`%XX`).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 1..i + 3).and_then(|h| {
            std::str::from_utf8(h)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        });
        match (b[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_errors_name_their_code_and_decode_the_message() {
        let e = RequestError::grpc(5, "no such item%3A 7%");
        assert_eq!(e.message, "gRPC NotFound: no such item: 7%");
        assert_eq!(
            (e.kind, e.code, e.broken),
            (ErrorKind::Status, Some(5), false)
        );
    }
}
