//! One HTTP/1.1 keep-alive connection driven by the task that holds it: the
//! request goes out as bytes encoded once per target, the answer is parsed
//! with httparse and its body counted, not kept. No protocol task and no
//! channel between the worker and the socket, so a request costs two system
//! calls and little else: a load generator must not measure itself.
use crate::{ErrorKind, Reply, RequestError};
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

/// Response heads larger than this are a protocol error.
const MAX_HEAD: usize = 64 * 1024;
const READ_SIZE: usize = 8 * 1024;
/// A connection reads into a buffer this small (a head and a small body
/// fit: nginx's default page, 850 bytes with its head) and grows it to
/// `READ_SIZE` for the first body that does not: at 10,000 connections the
/// difference is 70 MB. A buffer of this size is taken only once the
/// answer can be read and given back when it is whole, so connections
/// waiting for small answers hold none (1 KB each of 10,000 waiting;
/// bench/log/RESULTS.md); a grown one is kept, not zeroed again per answer.
const FIRST_SIZE: usize = 1024;
const MAX_HEADERS: usize = 64;

/// A byte stream HTTP/1.1 runs over.
pub trait Wire: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Without blocking and without a system call where possible: has the
    /// peer closed (or written unasked) while the connection sat idle?
    fn closed_while_idle(&mut self) -> bool {
        false
    }

    /// Ready when a read may bring bytes (always, where the stream cannot
    /// tell without reading).
    fn poll_readable(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Wire for TcpStream {
    fn closed_while_idle(&mut self) -> bool {
        match crate::net::readiness(self) {
            Poll::Pending => false,
            Poll::Ready(Err(_)) => true,
            // Readable while idle: end of stream, stray bytes, or a stale
            // readiness flag that one non-blocking read clears.
            Poll::Ready(Ok(())) => {
                let mut byte = [0u8; 1];
                !matches!(self.try_read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
        }
    }

    fn poll_readable(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_read_ready(cx)
    }
}

/// The read half of a pipelined connection (`pipelined.rs`): its answers
/// are read here while another task writes the requests.
pub(crate) struct ReadHalf(pub(crate) tokio::net::tcp::OwnedReadHalf);

impl AsyncRead for ReadHalf {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

/// Never written: the requests go out through the write half.
impl AsyncWrite for ReadHalf {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Err(io::ErrorKind::Unsupported.into()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Wire for ReadHalf {
    fn poll_readable(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_ref().poll_read_ready(cx)
    }
}

/// TLS records (session tickets) may arrive while idle, so readiness says
/// nothing; a closed connection shows on the next request, which is then
/// retried as unsent.
impl Wire for tokio_rustls::client::TlsStream<TcpStream> {}

/// An HTTP/1.1 connection.
pub struct Http1Conn<I = TcpStream> {
    io: I,
    /// Empty between small answers (see [`FIRST_SIZE`]).
    buf: Vec<u8>,
    /// Bytes of `buf` holding data not yet parsed.
    filled: usize,
    /// Has carried a request before: a close before any answer means the
    /// server dropped it while idle, and the request may go elsewhere.
    reused: bool,
    /// The server said it closes after the last answer, or the stream is in
    /// an unknown state.
    closed: bool,
    /// When the first read of the last exchange returned bytes.
    first_byte: Option<Instant>,
}

/// How the answer's body is delimited.
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

pub(crate) struct Head {
    status: u16,
    len: usize,
    framing: Framing,
    close: bool,
}

impl<I: Wire> Http1Conn<I> {
    pub(crate) fn new(io: I) -> Self {
        Http1Conn {
            io,
            buf: Vec::new(),
            filled: 0,
            reused: false,
            closed: false,
            first_byte: None,
        }
    }

    pub(crate) fn is_broken(&mut self) -> bool {
        self.closed || self.io.closed_while_idle()
    }

    /// When the answer to the last request began to arrive (`None` if
    /// nothing came, or it was already buffered before the request went).
    pub(crate) fn first_byte(&self) -> Option<Instant> {
        self.first_byte
    }

    /// Send `request` (a whole encoded request, body included) and read the
    /// answer; `bodiless` (a HEAD request) reads no body whatever the
    /// answer's headers say.
    pub(crate) async fn exchange(
        &mut self,
        request: &[u8],
        bodiless: bool,
    ) -> Result<Reply, RequestError> {
        let reply = self.exchange_buffered(request, bodiless).await;
        if self.filled == 0 && self.buf.len() <= FIRST_SIZE {
            self.buf = Vec::new();
        }
        reply
    }

    async fn exchange_buffered(
        &mut self,
        request: &[u8],
        bodiless: bool,
    ) -> Result<Reply, RequestError> {
        if self.closed {
            return Err(RequestError::unsent("connection closed before the request"));
        }
        let reused = std::mem::replace(&mut self.reused, true);
        self.first_byte = None;
        // Until the answer is whole the connection's state is unknown.
        self.closed = true;
        if let Err(e) = self.io.write_all(request).await {
            return Err(match reused {
                true => RequestError::unsent(format!("connection closed before the request: {e}")),
                false => RequestError::broken(ErrorKind::of_io(&e), e),
            });
        }
        match self.final_head().await {
            Ok(head) => self.finish(head, bodiless).await,
            Err(e) if reused && e.kind == ErrorKind::Reset && self.filled == 0 => {
                Err(RequestError::unsent(e.message))
            }
            Err(e) => Err(e),
        }
    }

    /// Read the next answer, its request already written (pipelining: the
    /// answers come in the order of the requests).
    pub(crate) async fn read_answer(&mut self, bodiless: bool) -> Result<Reply, RequestError> {
        self.first_byte = None;
        self.closed = true;
        let head = self.final_head().await?;
        let reply = self.finish(head, bodiless).await;
        if self.filled == 0 && self.buf.len() <= FIRST_SIZE {
            self.buf = Vec::new();
        }
        reply
    }

    /// Whether the server said it closes after this answer (or the stream
    /// is in an unknown state).
    pub(crate) fn closes(&self) -> bool {
        self.closed
    }

    /// The answer's head, past any 1xx answers (other than a protocol
    /// switch) that precede it.
    async fn final_head(&mut self) -> Result<Head, RequestError> {
        loop {
            let head = self.read_head().await?;
            if !(100..200).contains(&head.status) || head.status == 101 {
                return Ok(head);
            }
            self.consume(head.len);
        }
    }

    /// The answer's body after `head`, counted, and its status.
    async fn finish(&mut self, head: Head, bodiless: bool) -> Result<Reply, RequestError> {
        self.consume(head.len);
        let bytes = match head.framing {
            _ if bodiless => 0,
            Framing::Length(n) => self.read_length(n).await?,
            Framing::Chunked => self.read_chunked().await?,
            Framing::UntilClose => self.read_to_close().await?,
        };
        self.closed = head.close || (!bodiless && matches!(head.framing, Framing::UntilClose));
        if head.status >= 400 {
            return Err(RequestError::status(head.status));
        }
        Ok(Reply {
            status: head.status,
            bytes,
        })
    }

    /// Drop `n` parsed bytes from the front of the buffer.
    fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.filled, 0);
        self.filled -= n;
    }

    /// Read more into the buffer; the end of the stream is an error.
    async fn fill(&mut self) -> Result<usize, RequestError> {
        if self.buf.is_empty() {
            poll_fn(|cx| self.io.poll_readable(cx))
                .await
                .map_err(read_error)?;
            self.buf = vec![0; FIRST_SIZE];
        } else if self.filled == self.buf.len() {
            if self.buf.len() >= MAX_HEAD {
                return Err(RequestError::protocol("answer head larger than 64 KiB"));
            }
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let (io, spare) = (&mut self.io, &mut self.buf[self.filled..]);
        let n = read(io, spare).await.map_err(read_error)?;
        if n == 0 {
            return Err(RequestError::broken(
                ErrorKind::Reset,
                "connection closed before the answer was complete",
            ));
        }
        self.filled += n;
        // One clock read per answer: at the first read that brought bytes.
        if self.first_byte.is_none() {
            self.first_byte = Some(Instant::now());
        }
        Ok(n)
    }

    async fn read_head(&mut self) -> Result<Head, RequestError> {
        loop {
            if self.filled > 0 {
                if let Some(head) = parse_head(&self.buf[..self.filled])? {
                    return Ok(head);
                }
            }
            self.fill().await?;
        }
    }

    /// Large bodies are read `READ_SIZE` at a time.
    fn grow_for_body(&mut self, left: u64) {
        if left > self.buf.len() as u64 && self.buf.len() < READ_SIZE {
            self.buf.resize(READ_SIZE, 0);
        }
    }

    async fn read_length(&mut self, n: u64) -> Result<u64, RequestError> {
        let mut left = n;
        self.grow_for_body(left);
        loop {
            let here = left.min(self.filled as u64);
            self.consume(here as usize);
            left -= here;
            if left == 0 {
                return Ok(n);
            }
            self.fill().await?;
        }
    }

    async fn read_to_close(&mut self) -> Result<u64, RequestError> {
        self.grow_for_body(u64::MAX);
        let mut bytes = self.filled as u64;
        self.filled = 0;
        loop {
            match read(&mut self.io, &mut self.buf).await {
                Ok(0) => return Ok(bytes),
                Ok(n) => bytes += n as u64,
                Err(e) => return Err(read_error(e)),
            }
        }
    }

    async fn read_chunked(&mut self) -> Result<u64, RequestError> {
        let mut bytes = 0u64;
        loop {
            let (used, size) = loop {
                match httparse::parse_chunk_size(&self.buf[..self.filled]) {
                    Ok(httparse::Status::Complete(found)) => break found,
                    Ok(httparse::Status::Partial) => {
                        self.fill().await?;
                    }
                    Err(_) => return Err(RequestError::protocol("invalid chunk size")),
                }
            };
            self.consume(used);
            if size == 0 {
                self.read_trailers().await?;
                return Ok(bytes);
            }
            bytes += self.read_length(size).await?;
            self.expect_crlf().await?;
        }
    }

    async fn expect_crlf(&mut self) -> Result<(), RequestError> {
        while self.filled < 2 {
            self.fill().await?;
        }
        if &self.buf[..2] != b"\r\n" {
            return Err(RequestError::protocol("chunk not followed by CRLF"));
        }
        self.consume(2);
        Ok(())
    }

    /// Trailer lines up to and including the empty line.
    async fn read_trailers(&mut self) -> Result<(), RequestError> {
        loop {
            match self.buf[..self.filled]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                Some(0) => {
                    self.consume(2);
                    return Ok(());
                }
                Some(at) => self.consume(at + 2),
                None => {
                    self.fill().await?;
                }
            }
        }
    }
}

fn read_error(e: io::Error) -> RequestError {
    RequestError::broken(ErrorKind::of_io(&e), format!("reading the answer: {e}"))
}

async fn read<I: AsyncRead + Unpin>(io: &mut I, spare: &mut [u8]) -> io::Result<usize> {
    poll_fn(|cx| {
        let mut rb = ReadBuf::new(spare);
        match Pin::new(&mut *io).poll_read(cx, &mut rb) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(rb.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

pub(crate) fn parse_head(data: &[u8]) -> Result<Option<Head>, RequestError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(data) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(RequestError::protocol(format!("invalid answer head: {e}"))),
    };
    let status = resp.code.unwrap_or(0);
    let mut length = None;
    let mut chunked = false;
    // HTTP/1.0 closes unless told otherwise; HTTP/1.1 keeps alive unless told.
    let mut close = resp.version == Some(0);
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| RequestError::protocol("invalid content-length"))?;
            if length.is_some_and(|m| m != n) {
                return Err(RequestError::protocol("conflicting content-length headers"));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = has_token(h.value, b"chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            if has_token(h.value, b"close") {
                close = true;
            } else if has_token(h.value, b"keep-alive") {
                close = false;
            }
        }
    }
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok(Some(Head {
        status,
        len,
        framing,
        close,
    }))
}

/// Does a comma-separated header value list `token` (any case)?
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_framed_by_length_chunks_or_close() {
        let h = parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\nhello")
            .unwrap()
            .unwrap();
        assert_eq!((h.status, h.close), (200, false));
        assert!(matches!(h.framing, Framing::Length(13)));
        let h = parse_head(
            b"HTTP/1.1 500 x\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!((h.status, h.close), (500, true));
        assert!(matches!(h.framing, Framing::Chunked));
        let h = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(h.close && matches!(h.framing, Framing::UntilClose));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-le")
            .unwrap()
            .is_none());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n").is_err());
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }

    async fn answer(raw: &'static [u8]) -> (Result<Reply, RequestError>, bool) {
        let (client, mut server) = tokio::io::duplex(64);
        let serve = tokio::spawn(async move {
            let mut req = [0u8; 64];
            let _ = tokio::io::AsyncReadExt::read(&mut server, &mut req).await;
            // Small pieces, so every parser state meets a partial buffer.
            for piece in raw.chunks(3) {
                server.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut conn = Http1Conn::new(client);
        let out = conn
            .exchange(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", false)
            .await;
        serve.await.unwrap();
        (out, conn.closed)
    }

    impl Wire for tokio::io::DuplexStream {}

    /// `raw` as the answer (then the server closes): the outcome, or
    /// `None` if reading it did not end within a second.
    fn answer_any(raw: Vec<u8>) -> Option<Result<Reply, RequestError>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (client, mut server) = tokio::io::duplex(256);
            tokio::spawn(async move {
                let mut req = [0u8; 64];
                let _ = tokio::io::AsyncReadExt::read(&mut server, &mut req).await;
                for piece in raw.chunks(7) {
                    if server.write_all(piece).await.is_err() {
                        return;
                    }
                }
            });
            let mut conn = Http1Conn::new(client);
            let exchange = conn.exchange(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", false);
            tokio::time::timeout(std::time::Duration::from_secs(1), exchange)
                .await
                .ok()
        })
    }

    /// A head, then anything: the framings, lengths and chunk sizes a
    /// broken or hostile server might send.
    fn hostile() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let heads = prop_oneof![
            Just(b"HTTP/1.1 200 OK\r\ncontent-length: ".to_vec()),
            Just(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec()),
            Just(b"HTTP/1.1 200 OK\r\n\r\n".to_vec()),
            Just(b"HTTP/1.1 100 Continue\r\n\r\n".to_vec()),
            Just(Vec::new()),
        ];
        let tail = proptest::collection::vec(
            prop_oneof![
                Just(b"\r\n".to_vec()),
                Just(b"ffffffffffffffff\r\n".to_vec()),
                Just(b"18446744073709551616\r\n\r\n".to_vec()),
                Just(b"0\r\n\r\n".to_vec()),
                Just(b"HTTP/1.1 ".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..24),
            ],
            0..12,
        );
        (heads, tail).prop_map(|(mut h, t)| {
            h.extend(t.concat());
            h
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(11),
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any bytes as an answer head: an answer, a request for more, or
        /// an error, never a panic.
        #[test]
        fn any_head_parses_without_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_head(&bytes);
        }

        /// Any answer, then the server closes: the exchange ends (with an
        /// answer or an error) within a second, never panics.
        #[test]
        fn any_answer_ends_the_exchange(raw in hostile()) {
            proptest::prop_assert!(answer_any(raw).is_some(), "the exchange hung");
        }
    }

    #[tokio::test]
    async fn answers_in_pieces_are_read_whole() {
        let (r, closed) = answer(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello").await;
        assert_eq!(r.unwrap().bytes, 5);
        assert!(!closed);
        let chunked = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nwiki\r\n5;x=y\r\npedia\r\n0\r\nt: 1\r\n\r\n";
        let (r, closed) = answer(chunked).await;
        assert_eq!(
            r.unwrap(),
            Reply {
                status: 200,
                bytes: 9
            }
        );
        assert!(!closed);
        let (r, closed) =
            answer(b"HTTP/1.1 503 busy\r\nconnection: close\r\ncontent-length: 2\r\n\r\nno").await;
        assert_eq!(r.unwrap_err().code, Some(503));
        assert!(closed);
        let (r, closed) = answer(b"HTTP/1.1 200 OK\r\n\r\nuntil the end").await;
        assert_eq!(r.unwrap().bytes, 13);
        assert!(closed);
        let (r, _) = answer(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nshort").await;
        assert_eq!(r.unwrap_err().kind, ErrorKind::Reset);
    }
}
