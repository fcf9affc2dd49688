//! Opening TCP connections, shared by every protocol.
use crate::{ErrorKind, RequestError};
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::net::TcpStream;

/// The socket's read readiness as the runtime last saw it, without a system
/// call and without waiting: for connections checked while idle, where
/// readable means the peer closed or spoke unasked. A short read clears the
/// flag, so after a whole answer it is normally not set.
pub(crate) fn readiness(stream: &TcpStream) -> Poll<io::Result<()>> {
    stream.poll_read_ready(&mut Context::from_waker(Waker::noop()))
}

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
