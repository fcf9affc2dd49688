//! Redis errors counted by kind.
use crate::{ErrorKind, RequestError};

/// Count a Redis error by kind. An error the server answered with leaves the
/// connection usable.
pub fn classify(e: &redis::RedisError) -> RequestError {
    use redis::ErrorKind as K;
    let (kind, broken) = if e.is_timeout() {
        (ErrorKind::Timeout, true)
    } else if e.is_connection_refusal() {
        (ErrorKind::Refused, true)
    } else if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() {
        (ErrorKind::Reset, true)
    } else {
        match e.kind() {
            K::ParseError | K::TypeError => (ErrorKind::Protocol, false),
            K::AuthenticationFailed | K::InvalidClientConfig => (ErrorKind::Status, true),
            _ => (ErrorKind::Status, false),
        }
    };
    RequestError {
        kind,
        broken,
        unsent: false,
        message: format!("redis: {e}"),
        code: None,
        sqlstate: None,
    }
}
