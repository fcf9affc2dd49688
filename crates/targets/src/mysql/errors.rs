//! `mysql_async` errors counted by kind, server errors by their code
//! (1040 too many connections, 1045 access denied, 1064 syntax, 1213
//! deadlock, ...).
use crate::{ErrorKind, RequestError};
use mysql_async::{DriverError, Error, IoError};

/// How a server error code is counted, and whether it ends the session.
pub fn server_error_kind(code: u16) -> (ErrorKind, bool) {
    match code {
        // Too many connections; host blocked; too many for the user.
        1040 | 1129 | 1203 => (ErrorKind::Refused, true),
        // Server shutdown in progress; connection killed; aborted;
        // disconnected for inactivity (MySQL 8).
        1053 | 1152 | 1927 | 4031 => (ErrorKind::Reset, true),
        // Lock wait timeout; query interrupted by max_execution_time
        // (MySQL, MariaDB).
        1205 | 3024 | 1969 => (ErrorKind::Timeout, false),
        _ => (ErrorKind::Status, false),
    }
}

/// Count a `mysql_async` error.
pub fn classify(e: &Error) -> RequestError {
    match e {
        Error::Server(s) => {
            let (kind, broken) = server_error_kind(s.code);
            RequestError {
                kind,
                broken,
                unsent: false,
                message: format!("{} ({})", s.message, s.code),
                code: Some(s.code),
                sqlstate: None,
            }
        }
        Error::Io(IoError::Io(io)) => RequestError::broken(ErrorKind::of_io(io), io),
        Error::Io(IoError::Tls(tls)) => {
            RequestError::broken(ErrorKind::Protocol, format!("TLS: {tls}"))
        }
        Error::Driver(DriverError::ConnectionClosed | DriverError::PoolDisconnected) => {
            RequestError::broken(ErrorKind::Reset, e)
        }
        Error::Driver(DriverError::StmtParamsMismatch { required, supplied }) => {
            RequestError::protocol(format!(
                "the query takes {required} parameter(s) and {supplied} --param given"
            ))
        }
        _ => RequestError::broken(ErrorKind::Protocol, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_codes_keep_their_number_and_map_to_a_kind() {
        assert_eq!(server_error_kind(1040), (ErrorKind::Refused, true));
        assert_eq!(server_error_kind(1927), (ErrorKind::Reset, true));
        assert_eq!(server_error_kind(1205), (ErrorKind::Timeout, false));
        assert_eq!(server_error_kind(1213), (ErrorKind::Status, false));
        let io = Error::Io(IoError::Io(std::io::ErrorKind::ConnectionRefused.into()));
        assert_eq!(classify(&io).kind, ErrorKind::Refused);
    }
}
