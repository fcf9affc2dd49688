//! Where a PostgreSQL session goes: TCP, TLS over TCP (negotiated with an
//! SSLRequest, as `sslmode` asks), or a Unix-domain socket. Both kinds of
//! connection (holder-driven sessions and tokio-postgres clients) start
//! here; tokio-postgres is then given the stream as it is.
use crate::source::Sources;
use crate::tls::{self, TlsClient, Verify};
use crate::{net, ErrorKind, RequestError, TargetError};
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread::ThreadId;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::client::TlsStream;

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    /// TLS if the server offers it (libpq's default).
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub(crate) fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" | "allow" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "invalid sslmode \"{other}\": expected disable, allow, prefer, require, verify-ca or verify-full"
                ))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the server listens.
#[derive(Clone, Debug)]
pub(crate) enum Endpoint {
    Tcp(SocketAddr),
    /// The socket file (`DIR/.s.PGSQL.PORT`).
    Unix(PathBuf),
}

impl Endpoint {
    /// The socket of a server listening in `dir` on `port`.
    pub(crate) fn unix(dir: &Path, port: u16) -> Endpoint {
        Endpoint::Unix(dir.join(format!(".s.PGSQL.{port}")))
    }
}

/// How sessions are opened: the endpoint and TLS.
#[derive(Clone)]
pub(crate) struct Opener {
    pub(crate) endpoint: Endpoint,
    mode: SslMode,
    tls: Option<TlsClient>,
    /// The name the certificate must be for (`verify-full`).
    host: String,
    /// Local addresses TCP sessions are bound to (`--source`).
    pub(crate) sources: Sources,
}

impl std::fmt::Debug for Opener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opener")
            .field("endpoint", &self.endpoint)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Opener {
    /// TLS as `mode` says; the root certificates from `rootcert` (else
    /// `~/.postgresql/root.crt` if there is one, and the system's).
    /// `require` with a root certificate checks the chain, as libpq does.
    pub(crate) fn new(
        endpoint: Endpoint,
        host: &str,
        mode: SslMode,
        rootcert: Option<PathBuf>,
        own: (Option<PathBuf>, Option<PathBuf>),
        resume: bool,
    ) -> Result<Opener, TargetError> {
        let rootcert = rootcert.or_else(|| {
            let home = std::env::var_os("HOME")?;
            let default = PathBuf::from(home).join(".postgresql/root.crt");
            default.is_file().then_some(default)
        });
        let verify = match (mode, &rootcert) {
            (SslMode::Disable, _) => None,
            (SslMode::Prefer, _) | (SslMode::Require, None) => Some(Verify::Nothing),
            (SslMode::Require | SslMode::VerifyCa, Some(_)) | (SslMode::VerifyCa, None) => {
                Some(Verify::Chain)
            }
            (SslMode::VerifyFull, _) => Some(Verify::Full),
        };
        let (cert, key) = (own.0.as_deref(), own.1.as_deref());
        let tls = match verify {
            Some(v) => Some(tls::postgres_client(
                v,
                rootcert.as_deref(),
                cert,
                key,
                resume,
            )?),
            None => None,
        };
        Ok(Opener {
            endpoint,
            mode,
            tls,
            host: host.to_string(),
            sources: Sources::default(),
        })
    }

    /// The TLS handshakes so far, where sessions use TLS.
    pub(crate) fn tls_facts(&self) -> Option<poolbench_model::TlsFacts> {
        self.tls.as_ref().map(TlsClient::facts)
    }

    /// A connected stream, TLS negotiated (a Unix socket never uses TLS,
    /// as with libpq).
    pub(crate) async fn open(&self, timeout: Duration) -> Result<PgStream, RequestError> {
        let addr = match &self.endpoint {
            Endpoint::Unix(path) => {
                return match tokio::time::timeout(timeout, UnixStream::connect(path)).await {
                    Ok(Ok(s)) => Ok(PgStream::Unix(s)),
                    Ok(Err(e)) => Err(RequestError::broken(
                        ErrorKind::of_io(&e),
                        format!("connect {}: {e}", path.display()),
                    )),
                    Err(_) => Err(RequestError::broken(
                        ErrorKind::Timeout,
                        format!("connect {}: timed out", path.display()),
                    )),
                }
            }
            Endpoint::Tcp(addr) => *addr,
        };
        let mut tcp = net::tcp_connect(&self.sources, addr, timeout).await?;
        let Some(tls) = &self.tls else {
            return Ok(PgStream::Tcp(tcp));
        };
        if !ssl_request(&mut tcp).await? {
            return match self.mode {
                SslMode::Prefer => Ok(PgStream::Tcp(tcp)),
                mode => Err(RequestError::broken(
                    ErrorKind::Protocol,
                    format!("the server does not accept TLS (sslmode={})", mode.name()),
                )),
            };
        }
        let name = tls::name_of(&self.host).map_err(RequestError::protocol)?;
        let stream = tls.handshake(&name, tcp, timeout).await?;
        Ok(PgStream::Tls(Box::new(stream)))
    }
}

/// SSLRequest; true when the server agrees to TLS.
async fn ssl_request(tcp: &mut TcpStream) -> Result<bool, RequestError> {
    let io_err = |e: io::Error| RequestError::broken(ErrorKind::of_io(&e), e);
    // Length 8, then the request code 1234 5679.
    tcp.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
        .await
        .map_err(io_err)?;
    match tcp.read_u8().await.map_err(io_err)? {
        b'S' => Ok(true),
        b'N' => Ok(false),
        other => Err(RequestError::protocol(format!(
            "unexpected answer {other:#x} to SSLRequest"
        ))),
    }
}

/// A session's stream.
pub(crate) enum PgStream {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
    Unix(UnixStream),
}

impl PgStream {
    /// Moves the socket to the I/O driver of the holder's thread (see
    /// [`net::follow`]).
    pub(crate) fn follow(&mut self, home: &mut Option<ThreadId>) -> io::Result<()> {
        match self {
            PgStream::Tcp(s) => net::follow(s, home),
            PgStream::Tls(s) => net::follow(s.get_mut().0, home),
            PgStream::Unix(s) => net::follow_unix(s, home),
        }
    }

    /// Reads what is there without waiting, appending it to `buf`:
    /// `Pending` when nothing is.
    pub(crate) fn read_now(&mut self, buf: &mut bytes::BytesMut) -> Poll<io::Result<usize>> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        with_chunk(|chunk| {
            let mut read = ReadBuf::new(chunk);
            match Pin::new(self).poll_read(&mut cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    buf.extend_from_slice(read.filled());
                    Poll::Ready(Ok(read.filled().len()))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            }
        })
    }

    /// Asks the socket itself, not the runtime's last readiness, for what
    /// has arrived, appending it to `buf` (decrypted, over TLS): `None`
    /// when nothing has. Right after a query is sent to a server on this
    /// machine the answer is often there already, since the kernel tends to
    /// run the woken server process on the sender's core at once; reading
    /// it now saves waiting for the runtime's next poll of its sockets, as
    /// pgbench reads before it polls. A server elsewhere costs one
    /// `EAGAIN`. The end of the stream is left for the next read to find.
    pub(crate) fn recv_now(&mut self, buf: &mut bytes::BytesMut) -> Option<io::Result<usize>> {
        let read = |sock: socket2::SockRef<'_>, chunk: &mut [u8]| match (&*sock).read(chunk) {
            Ok(0) => None,
            Ok(n) => Some(Ok(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
            Err(e) => Some(Err(e)),
        };
        with_chunk(|chunk| {
            let n = match self {
                PgStream::Tcp(s) => read(socket2::SockRef::from(&*s), chunk)?,
                PgStream::Unix(s) => read(socket2::SockRef::from(&*s), chunk)?,
                PgStream::Tls(s) => {
                    let (tcp, session) = s.get_mut();
                    return read(socket2::SockRef::from(&*tcp), chunk)
                        .map(|n| n.and_then(|n| tls_feed(session, &chunk[..n], buf)));
                }
            };
            Some(n.inspect(|&n| buf.extend_from_slice(&chunk[..n])))
        })
    }
}

thread_local! {
    /// The load thread's scratch space for reads without waiting: zeroed
    /// once, not on every request (a fresh 4 KB array was, twice or three
    /// times per query).
    static CHUNK: std::cell::RefCell<[u8; CHUNK_SIZE]> = const { std::cell::RefCell::new([0; CHUNK_SIZE]) };
}

/// Bytes one read without waiting takes at most.
const CHUNK_SIZE: usize = 4096;

/// Runs `f` on this thread's scratch space (a fresh one if it is in use,
/// which no read nested in another does).
fn with_chunk<R>(f: impl FnOnce(&mut [u8]) -> R) -> R {
    CHUNK.with(|c| match c.try_borrow_mut() {
        Ok(mut chunk) => f(&mut chunk[..]),
        Err(_) => f(&mut [0; CHUNK_SIZE]),
    })
}

/// Hands TLS records read from the socket to the session; appends the
/// plaintext they held to `buf`.
fn tls_feed(
    session: &mut rustls::ClientConnection,
    mut records: &[u8],
    buf: &mut bytes::BytesMut,
) -> io::Result<usize> {
    let before = buf.len();
    while !records.is_empty() {
        if session.read_tls(&mut records)? == 0 {
            return Err(io::Error::other(
                "the TLS session took none of what was read",
            ));
        }
        let state = session
            .process_new_packets()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let ready = state.plaintext_bytes_to_read();
        if ready > 0 {
            let at = buf.len();
            buf.resize(at + ready, 0);
            session.reader().read_exact(&mut buf[at..])?;
        }
    }
    Ok(buf.len() - before)
}

impl AsyncRead for PgStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            PgStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            PgStream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for PgStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            PgStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            PgStream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_flush(cx),
            PgStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            PgStream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PgStream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            PgStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            PgStream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use std::io::Write;

    #[tokio::test]
    async fn recv_now_reads_what_arrived_and_leaves_the_end_for_the_next_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut io = PgStream::Tcp(client);
        let mut buf = BytesMut::from(&b"kept"[..]);
        assert!(io.recv_now(&mut buf).is_none(), "nothing has arrived");
        server.write_all(b"Z answer").unwrap();
        // Loopback delivers within the write; allow the scheduler a moment.
        let mut got = None;
        for _ in 0..100 {
            got = io.recv_now(&mut buf);
            if got.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(got.unwrap().unwrap(), 8);
        assert_eq!(&buf[..], b"keptZ answer");
        drop(server);
        std::thread::sleep(Duration::from_millis(20));
        assert!(io.recv_now(&mut buf).is_none(), "the end is not a read");
        let mut rest = [0u8; 8];
        assert_eq!(
            io.read(&mut rest).await.unwrap(),
            0,
            "the next read finds the end"
        );
    }
}
