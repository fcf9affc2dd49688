//! Opening TCP connections, shared by every protocol.
use crate::source::Sources;
use crate::{ErrorKind, RequestError};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::task::{Context, Poll, Waker};
use std::thread::ThreadId;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::runtime::{Handle, RuntimeFlavor};

/// The socket's read readiness as the runtime last saw it, without a system
/// call and without waiting: for connections checked while idle, where
/// readable means the peer closed or spoke unasked. A short read clears the
/// flag, so after a whole answer it is normally not set.
pub(crate) fn readiness(stream: &TcpStream) -> Poll<io::Result<()>> {
    stream.poll_read_ready(&mut Context::from_waker(Waker::noop()))
}

/// A TCP connection to `addr` from the next of `sources`, with Nagle off,
/// within `timeout`.
pub(crate) async fn tcp_connect(
    sources: &Sources,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<TcpStream, RequestError> {
    match tokio::time::timeout(timeout, sources.connect(addr)).await {
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

/// Moves an idle socket to the I/O driver of the calling task's runtime
/// when that is a current-thread runtime on another thread than `home`
/// (the engine's load threads): registered again there, through a
/// duplicate of its descriptor, so its readiness wakes the thread that
/// waits on it. On a multi-thread runtime, whose one driver serves all its
/// threads, nothing moves. `home` is the thread it was last moved to.
pub(crate) fn follow(stream: &mut TcpStream, home: &mut Option<ThreadId>) -> io::Result<()> {
    move_to_here(stream, home, |fd| {
        TcpStream::from_std(std::net::TcpStream::from(fd))
    })
}

/// [`follow`] for a Unix-domain socket.
pub(crate) fn follow_unix(
    stream: &mut tokio::net::UnixStream,
    home: &mut Option<ThreadId>,
) -> io::Result<()> {
    move_to_here(stream, home, |fd| {
        tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(fd))
    })
}

/// Registers `stream` again, from a duplicate of its descriptor made into
/// a socket by `open`, with this thread's current-thread runtime.
fn move_to_here<S: AsFd>(
    stream: &mut S,
    home: &mut Option<ThreadId>,
    open: impl FnOnce(std::os::fd::OwnedFd) -> io::Result<S>,
) -> io::Result<()> {
    let here = std::thread::current().id();
    if *home == Some(here) {
        return Ok(());
    }
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::CurrentThread => {}
        _ => return Ok(()),
    }
    *stream = open(stream.as_fd().try_clone_to_owned()?)?;
    *home = Some(here);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::runtime::Builder;

    fn current_thread() -> tokio::runtime::Runtime {
        Builder::new_current_thread().enable_all().build().unwrap()
    }

    /// Accept one connection and echo what it sends until it closes.
    async fn echo(listener: tokio::net::TcpListener) {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 64];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => s.write_all(&buf[..n]).await.unwrap(),
            }
        }
    }

    async fn round_trip(stream: &mut TcpStream, msg: &[u8]) -> Vec<u8> {
        stream.write_all(msg).await.unwrap();
        let mut got = vec![0u8; msg.len()];
        stream.read_exact(&mut got).await.unwrap();
        got
    }

    #[test]
    fn a_socket_follows_its_holder_to_another_current_thread_runtime() {
        let server = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = server
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        server.spawn(echo(listener));

        // Opened on one thread's runtime, used there.
        let (mut stream, mut home) = std::thread::spawn(move || {
            current_thread().block_on(async {
                let mut stream = TcpStream::connect(addr).await.unwrap();
                let mut home = None;
                follow(&mut stream, &mut home).unwrap();
                assert_eq!(round_trip(&mut stream, b"one").await, b"one");
                (stream, home)
            })
        })
        .join()
        .unwrap();
        let first = home.expect("moved to the opening thread");

        // Then another thread's runtime takes it over. That runtime must
        // outlive the socket registered with it, so it stays in the thread.
        std::thread::spawn(move || {
            current_thread().block_on(async {
                follow(&mut stream, &mut home).unwrap();
                assert_ne!(home, Some(first), "moved to the new thread");
                assert_eq!(home, Some(std::thread::current().id()));
                for _ in 0..3 {
                    assert_eq!(round_trip(&mut stream, b"two").await, b"two");
                }
                // Already home: nothing moves.
                let before = home;
                follow(&mut stream, &mut home).unwrap();
                assert_eq!(home, before);
            })
        })
        .join()
        .unwrap();
    }

    #[test]
    fn nothing_moves_on_a_multi_thread_runtime() {
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut stream = TcpStream::connect(listener.local_addr().unwrap())
                .await
                .unwrap();
            let mut home = None;
            follow(&mut stream, &mut home).unwrap();
            assert_eq!(home, None);
        });
    }
}
