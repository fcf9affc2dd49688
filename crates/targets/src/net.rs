//! Opening TCP connections, shared by every protocol.
use crate::{ErrorKind, RequestError};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;

/// A TCP connection to `addr` with Nagle off, within `timeout`.
pub(crate) async fn tcp_connect(
    addr: SocketAddr,
    timeout: Duration,
) -> Result<TcpStream, RequestError> {
    match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => {
            // Best effort: a socket that refuses it still works.
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
        Ok(Err(e)) => Err(RequestError::broken(
            ErrorKind::of_io(&e),
            format!("connect {addr}: {e}"),
        )),
        Err(_) => Err(RequestError::broken(
            ErrorKind::Timeout,
            format!("connect {addr}: timed out"),
        )),
    }
}
