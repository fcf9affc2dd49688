//! A PostgreSQL connection driven by the task that holds it, for strategies
//! that lease a connection to one task at a time: the query is checked
//! once (as the unnamed statement), each request is one write (encoded once
//! per target when the parameters are fixed: see the query modes, `modes.rs`;
//! in `prepared` mode Bind, Execute and Sync, the session's first request
//! led by the Parse of the named statement) and reads up to ReadyForQuery,
//! as pgbench does. No protocol
//! task and no channel between the worker and the socket. Messages are
//! encoded and parsed by `postgres-protocol`, the crate under tokio-postgres.
use super::params::TextParam;
use super::stream::PgStream;
use crate::{ErrorKind, Reply, RequestError};
use bytes::{Buf, Bytes, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::backend::{self, Message};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;
use std::io;
use std::task::Poll;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::Config;

/// The name the query is prepared under on each connection.
pub(crate) const STATEMENT: &str = "poolbench";
const READ_SIZE: usize = 8 * 1024;
/// The largest message a session accepts: a declared length is never
/// trusted beyond it (a broken server could announce gigabytes).
const MAX_MESSAGE: usize = 64 << 20;

/// One PostgreSQL session on one connection.
pub struct PgWire {
    io: PgStream,
    /// Received, not yet parsed.
    buf: BytesMut,
    /// Has carried a request before (see [`crate::http1::wire`]).
    reused: bool,
    /// The server accepted a Parse on this session (`prepared` mode: the
    /// named statement exists, as far as the session can tell).
    prepared: bool,
    /// The session ended, or is in an unknown state (a request cut short).
    closed: bool,
    /// The thread whose runtime the socket last moved to ([`crate::net::follow`]).
    home: Option<std::thread::ThreadId>,
}

/// Bind (the parameters in text format), Execute and Sync of the prepared
/// statement.
pub(crate) fn encode_request(params: &[TextParam]) -> Bytes {
    let mut buf = BytesMut::new();
    let formats: &[i16] = if params.is_empty() { &[] } else { &[0] };
    frontend::bind(
        "",
        STATEMENT,
        formats.iter().copied(),
        params.iter(),
        |p: &TextParam, out: &mut BytesMut| {
            out.extend_from_slice(&p.0);
            Ok(IsNull::No)
        },
        std::iter::empty::<i16>(),
        &mut buf,
    )
    .map_err(|_| ())
    .expect("text parameters encode");
    frontend::execute("", 0, &mut buf).expect("an unnamed portal encodes");
    frontend::sync(&mut buf);
    buf.freeze()
}

impl PgWire {
    /// Start a session on `io` as `config` says (user, password by
    /// cleartext, MD5 or SCRAM-SHA-256, database), then check `query`
    /// (`check`: not in simple mode, whose text may hold several
    /// statements).
    pub(crate) async fn open(
        io: PgStream,
        config: &Config,
        query: &str,
        given: usize,
        check: bool,
    ) -> Result<PgWire, RequestError> {
        let mut conn = PgWire {
            io,
            buf: BytesMut::with_capacity(READ_SIZE),
            reused: false,
            prepared: false,
            closed: false,
            home: None,
        };
        conn.startup(config).await?;
        if check {
            conn.check_query(query, given).await?;
        }
        Ok(conn)
    }

    async fn startup(&mut self, config: &Config) -> Result<(), RequestError> {
        let user = config
            .get_user()
            .map(str::to_string)
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "postgres".into());
        let mut params = vec![("client_encoding", "UTF8"), ("user", user.as_str())];
        let optional = [
            ("database", config.get_dbname()),
            ("options", config.get_options()),
            ("application_name", config.get_application_name()),
        ];
        params.extend(optional.iter().filter_map(|(k, v)| v.map(|v| (*k, v))));
        let mut out = BytesMut::new();
        frontend::startup_message(params, &mut out).map_err(RequestError::protocol)?;
        self.send(&out).await?;
        self.authenticate(&user, config.get_password()).await?;
        loop {
            match self.message().await? {
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(db_error(&body)),
                _ => {}
            }
        }
    }

    /// The authentication exchange, to AuthenticationOk: cleartext, MD5 or
    /// SCRAM-SHA-256, as the server asks.
    async fn authenticate(
        &mut self,
        user: &str,
        password: Option<&[u8]>,
    ) -> Result<(), RequestError> {
        let mut out = BytesMut::new();
        let need = || {
            RequestError::broken(
                ErrorKind::Protocol,
                "the server asks for a password and the URL has none",
            )
        };
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            out.clear();
            match self.message().await? {
                Message::AuthenticationOk => break,
                Message::AuthenticationCleartextPassword => {
                    frontend::password_message(password.ok_or_else(need)?, &mut out)
                        .map_err(RequestError::protocol)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(user.as_bytes(), password.ok_or_else(need)?, body.salt());
                    frontend::password_message(hash.as_bytes(), &mut out)
                        .map_err(RequestError::protocol)?;
                }
                Message::AuthenticationSasl(body) => {
                    let mechanisms: Vec<String> = body
                        .mechanisms()
                        .map(|m| Ok(m.to_string()))
                        .collect()
                        .map_err(RequestError::protocol)?;
                    if !mechanisms.iter().any(|m| m == sasl::SCRAM_SHA_256) {
                        return Err(RequestError::protocol(format!(
                            "no supported authentication mechanism among {mechanisms:?}"
                        )));
                    }
                    let s = sasl::ScramSha256::new(
                        password.ok_or_else(need)?,
                        sasl::ChannelBinding::unsupported(),
                    );
                    frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut out)
                        .map_err(RequestError::protocol)?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| RequestError::protocol("unexpected SASL step"))?;
                    s.update(body.data()).map_err(RequestError::protocol)?;
                    frontend::sasl_response(s.message(), &mut out)
                        .map_err(RequestError::protocol)?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| RequestError::protocol("unexpected SASL step"))?;
                    s.finish(body.data()).map_err(RequestError::protocol)?;
                }
                Message::ErrorResponse(body) => return Err(db_error(&body)),
                _ => {
                    return Err(RequestError::protocol(
                        "unexpected message during authentication",
                    ))
                }
            }
            if !out.is_empty() {
                self.send(&out).await?;
            }
        }
        Ok(())
    }

    /// Parse and describe `query` as the unnamed statement: a query the
    /// server refuses, or one taking other than `given` parameters, stops
    /// the connect. Nothing outlives it (a transaction-pooling proxy may
    /// give the next request another server connection).
    async fn check_query(&mut self, query: &str, given: usize) -> Result<(), RequestError> {
        let mut out = BytesMut::new();
        frontend::parse("", query, std::iter::empty(), &mut out).map_err(RequestError::protocol)?;
        frontend::describe(b'S', "", &mut out).map_err(RequestError::protocol)?;
        frontend::sync(&mut out);
        self.send(&out).await?;
        let mut failed = None;
        loop {
            match self.message().await? {
                Message::ReadyForQuery(_) => break,
                Message::ErrorResponse(body) => failed = Some(db_error(&body)),
                Message::ParameterDescription(body) => {
                    let n = body.parameters().count().map_err(RequestError::protocol)?;
                    if let Err(e) = check_parameters(n, given) {
                        failed = Some(e);
                    }
                }
                _ => {}
            }
        }
        failed.map_or(Ok(()), Err)
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), RequestError> {
        // TLS keeps what it encrypts until flushed.
        let sent = match self.io.write_all(bytes).await {
            Ok(()) => self.io.flush().await,
            Err(e) => Err(e),
        };
        sent.map_err(|e| RequestError::broken(ErrorKind::of_io(&e), e))
    }

    /// Read more; the end of the stream is an error.
    async fn fill(&mut self) -> Result<(), RequestError> {
        self.buf.reserve(READ_SIZE);
        match self.io.read_buf(&mut self.buf).await {
            Ok(0) => Err(RequestError::broken(
                ErrorKind::Reset,
                "the server closed the connection",
            )),
            Ok(_) => Ok(()),
            Err(e) => Err(RequestError::broken(ErrorKind::of_io(&e), e)),
        }
    }

    /// The next whole message, parsed.
    async fn message(&mut self) -> Result<Message, RequestError> {
        loop {
            check_length(&self.buf)?;
            if let Some(m) = Message::parse(&mut self.buf).map_err(RequestError::protocol)? {
                return Ok(m);
            }
            self.fill().await?;
        }
    }

    /// The session ended or cannot be trusted; checked without blocking.
    pub(crate) fn is_broken(&mut self) -> bool {
        self.closed || self.closed_while_idle()
    }

    /// The server may speak while the session is idle: notices, parameter
    /// changes and notifications are kept for the next request to skip;
    /// anything else (a FATAL error before it closes) ends the session.
    fn closed_while_idle(&mut self) -> bool {
        match self.io.read_now(&mut self.buf) {
            Poll::Pending => false,
            Poll::Ready(Ok(0)) => true,
            Poll::Ready(Ok(_)) => !only_asynchronous(&self.buf),
            Poll::Ready(Err(e)) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }

    /// Send `request` (encoded as its query mode says), led by
    /// `parse` until the server has accepted one on this session, and read
    /// to ReadyForQuery, counting rows.
    pub(crate) async fn exchange(
        &mut self,
        request: &[u8],
        parse: Option<&[u8]>,
    ) -> Result<Reply, RequestError> {
        if self.closed {
            return Err(RequestError::unsent("session closed before the request"));
        }
        if let Err(e) = self.io.follow(&mut self.home) {
            self.closed = true;
            return Err(RequestError::unsent(format!(
                "session could not move to this thread: {e}"
            )));
        }
        let reused = std::mem::replace(&mut self.reused, true);
        // Until ReadyForQuery the session's state is unknown.
        self.closed = true;
        let led;
        let bytes = match parse.filter(|_| !self.prepared) {
            Some(parse) => {
                led = [parse, request].concat();
                &led[..]
            }
            None => request,
        };
        let sent = match self.io.write_all(bytes).await {
            Ok(()) => self.io.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = sent {
            return Err(match reused {
                true => RequestError::unsent(format!("session closed before the request: {e}")),
                false => RequestError::broken(ErrorKind::of_io(&e), e),
            });
        }
        // The answer of a server on this machine is often there already.
        if let Some(Err(e)) = self.io.recv_now(&mut self.buf) {
            return Err(match reused && self.buf.is_empty() {
                true => RequestError::unsent(format!("session closed before the answer: {e}")),
                false => RequestError::broken(ErrorKind::of_io(&e), e),
            });
        }
        self.read_answer(reused).await
    }

    /// Reads the answer to ReadyForQuery, counting rows; the first error
    /// that leaves the session usable is returned after it.
    async fn read_answer(&mut self, reused: bool) -> Result<Reply, RequestError> {
        let mut rows = 0u64;
        let mut failed: Option<RequestError> = None;
        let mut answered = false;
        loop {
            check_length(&self.buf)?;
            let header = match backend::Header::parse(&self.buf).map_err(RequestError::protocol)? {
                Some(h) if self.buf.len() > h.len() as usize => h,
                _ => {
                    match self.fill().await {
                        Ok(()) => {}
                        Err(e) if reused && !answered && self.buf.is_empty() => {
                            return Err(RequestError::unsent(e.message))
                        }
                        Err(e) => return Err(failed.unwrap_or(e)),
                    }
                    continue;
                }
            };
            answered = true;
            let size = 1 + header.len() as usize;
            match header.tag() {
                b'D' => {
                    rows += 1;
                    self.buf.advance(size);
                }
                b'Z' => {
                    self.buf.advance(size);
                    self.closed = false;
                    return match failed {
                        Some(e) => Err(e),
                        None => Ok(Reply {
                            status: 0,
                            bytes: rows,
                        }),
                    };
                }
                b'E' => {
                    let Some(Message::ErrorResponse(body)) =
                        Message::parse(&mut self.buf).map_err(RequestError::protocol)?
                    else {
                        return Err(RequestError::protocol("unreadable error response"));
                    };
                    let e = db_error(&body);
                    if e.broken {
                        return Err(e);
                    }
                    failed = Some(e);
                }
                b'1' => {
                    // ParseComplete: in prepared mode, the named statement.
                    self.prepared = true;
                    self.buf.advance(size);
                }
                // BindComplete, CommandComplete, EmptyQueryResponse,
                // PortalSuspended, RowDescription and NoData (simple
                // mode), and the asynchronous notices.
                b'2' | b'C' | b'I' | b's' | b'T' | b'n' | b'N' | b'S' | b'A' => {
                    self.buf.advance(size)
                }
                tag => {
                    return Err(RequestError::protocol(format!(
                        "unexpected message '{}' in an answer",
                        tag as char
                    )))
                }
            }
        }
    }
}

/// Reads every message in `data` as a session would (for fuzzing).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn read_any(data: &[u8]) {
    let _ = only_asynchronous(data);
    if check_length(data).is_err() {
        return;
    }
    let mut buf = BytesMut::from(data);
    while let Ok(Some(_)) = Message::parse(&mut buf) {
        if check_length(&buf).is_err() {
            return;
        }
    }
}

/// The next message in `buf` declares a length from 4 to [`MAX_MESSAGE`]
/// bytes. (Read here as the unsigned number the parser reserves room for:
/// fuzzing found a "negative" length that made it ask for 3.8 GB.)
fn check_length(buf: &[u8]) -> Result<(), RequestError> {
    let Some(len) = buf.get(1..5) else {
        return Ok(());
    };
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    match (4..=MAX_MESSAGE).contains(&len) {
        true => Ok(()),
        false => Err(RequestError::protocol(format!(
            "the server announced a message of {len} bytes (4 to {MAX_MESSAGE} expected)"
        ))),
    }
}

/// Do the whole messages in `buf` say nothing but notices, parameter
/// changes and notifications?
fn only_asynchronous(buf: &[u8]) -> bool {
    let mut rest = buf;
    while let Ok(Some(h)) = backend::Header::parse(rest) {
        if !matches!(h.tag(), b'N' | b'S' | b'A') {
            return false;
        }
        let size = 1 + h.len() as usize;
        if rest.len() < size {
            break;
        }
        rest = &rest[size..];
    }
    true
}

/// How an error the server reported counts, and whether it ends the
/// session: FATAL and PANIC, and an administrator's or crash shutdown, do;
/// a cancelled query is a timeout.
pub(crate) fn db_error_kind(severity: &str, code: &str) -> (ErrorKind, bool) {
    let fatal = matches!(severity, "FATAL" | "PANIC") || code == "57P01" || code == "57P02";
    if code == "57014" {
        (ErrorKind::Timeout, fatal)
    } else if fatal {
        (ErrorKind::Reset, true)
    } else {
        (ErrorKind::Status, false)
    }
}

fn db_error(body: &backend::ErrorResponseBody) -> RequestError {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        let value = String::from_utf8_lossy(f.value_bytes()).into_owned();
        match f.type_() {
            b'V' => severity = value,
            b'S' if severity.is_empty() => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
    }
    let (kind, broken) = db_error_kind(&severity, &code);
    RequestError {
        kind,
        broken,
        unsent: false,
        message: format!("{message} ({code})"),
        code: None,
        sqlstate: crate::SqlState::parse(&code),
    }
}

/// The query must take as many parameters as `--param` gives.
pub(crate) fn check_parameters(n: usize, given: usize) -> Result<(), RequestError> {
    match n == given {
        true => Ok(()),
        false => Err(RequestError::protocol(format!(
            "the query takes {n} parameter(s) and {given} --param given"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(7),
            failure_persistence: None,
            ..Default::default()
        })]

        /// Whatever a server sends, reading it never panics and a length
        /// beyond the cap is refused before any buffering.
        #[test]
        fn any_bytes_are_read_without_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            read_any(&bytes);
        }
    }

    #[test]
    fn a_huge_declared_length_is_refused() {
        let mut m = vec![b'D'];
        m.extend_from_slice(&i32::MAX.to_be_bytes());
        assert!(check_length(&m).is_err());
        assert!(check_length(b"D\0\0\0\x05\0").is_ok());
        // Found by fuzzing: negative as an i32, 3.8 GB as the parser read it.
        assert!(check_length(&[0xb6, 0xe2, 0, 0, 0x0a]).is_err());
    }

    #[test]
    fn server_errors_count_by_severity_and_code() {
        assert_eq!(db_error_kind("ERROR", "42P01"), (ErrorKind::Status, false));
        assert_eq!(db_error_kind("FATAL", "28P01"), (ErrorKind::Reset, true));
        assert_eq!(db_error_kind("FATAL", "57P01"), (ErrorKind::Reset, true));
        assert_eq!(db_error_kind("ERROR", "57014"), (ErrorKind::Timeout, false));
    }

    #[test]
    fn idle_bytes_are_harmless_only_if_asynchronous() {
        let notice = b"N\0\0\0\x05\0";
        let fatal = b"E\0\0\0\x05\0";
        assert!(only_asynchronous(notice));
        assert!(!only_asynchronous(fatal));
        assert!(!only_asynchronous(&[&notice[..], &fatal[..]].concat()));
        assert!(only_asynchronous(&notice[..3]));
    }

    #[test]
    fn the_request_is_bind_execute_sync() {
        let r = encode_request(&[TextParam(b"42".to_vec())]);
        assert!(r.windows(2).any(|w| w == b"42"), "the value is bound");
        let tags: Vec<u8> = {
            let mut rest = &r[..];
            let mut tags = Vec::new();
            while !rest.is_empty() {
                let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
                tags.push(rest[0]);
                rest = &rest[1 + len..];
            }
            tags
        };
        assert_eq!(tags, b"BES");
    }
}
