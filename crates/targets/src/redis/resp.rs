//! RESP on the wire, for sessions driven by their holder: a command as an
//! array of bulk strings, and the length of one whole reply in a buffer,
//! found without copying it (RESP2, and RESP3's types should a server send
//! them). Declared lengths are capped and nesting is bounded, so a broken
//! server cannot make a session allocate or recurse without end.

/// The largest bulk string a session accepts (Redis's own
/// `proto-max-bulk-len` default).
const MAX_BULK: usize = 512 << 20;
/// The deepest nesting of arrays and maps a reply may have.
const MAX_DEPTH: usize = 64;

/// `words` as one RESP command (`*N`, then `$len` and the bytes of each),
/// appended to `out`.
pub(crate) fn encode_command<W: AsRef<[u8]>>(words: &[W], out: &mut Vec<u8>) {
    header(out, b'*', words.len());
    for w in words {
        let w = w.as_ref();
        header(out, b'$', w.len());
        out.extend_from_slice(w);
        out.extend_from_slice(b"\r\n");
    }
}

fn header(out: &mut Vec<u8>, tag: u8, n: usize) {
    out.push(tag);
    out.extend_from_slice(n.to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// One whole reply at the start of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Its length in bytes.
    pub(crate) len: usize,
    /// Payload bytes (strings, summed through arrays and maps).
    pub(crate) bytes: u64,
    /// The text of an error reply (`-ERR …`), the top level only.
    pub(crate) error: Option<String>,
}

/// The reply at the start of `buf`: `Ok(None)` while it is incomplete, an
/// error when the bytes are not RESP.
pub(crate) fn parse(buf: &[u8]) -> Result<Option<Parsed>, String> {
    let mut bytes = 0;
    let Some(len) = value(buf, 0, 0, &mut bytes)? else {
        return Ok(None);
    };
    let error = (buf[0] == b'-' || buf[0] == b'!').then(|| error_text(&buf[..len]));
    Ok(Some(Parsed { len, bytes, error }))
}

fn error_text(reply: &[u8]) -> String {
    let text = match reply[0] {
        // A blob error: `!len`, then the text.
        b'!' => reply
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&reply[1..], |at| &reply[at + 1..]),
        _ => &reply[1..],
    };
    String::from_utf8_lossy(text).trim_end().to_string()
}

/// The end of the value starting at `at`, or `None` while incomplete.
fn value(buf: &[u8], at: usize, depth: usize, bytes: &mut u64) -> Result<Option<usize>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("a reply nested over {MAX_DEPTH} levels"));
    }
    let Some((line, next)) = line(buf, at)? else {
        return Ok(None);
    };
    let tag = buf[at];
    match tag {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => {
            if matches!(tag, b'+' | b'-') {
                *bytes += line.len() as u64;
            }
            Ok(Some(next))
        }
        b'$' | b'!' | b'=' => {
            let Some(n) = count(line, MAX_BULK)? else {
                return Ok(Some(next));
            };
            let end = next + n + 2;
            if buf.len() < end {
                return Ok(None);
            }
            if &buf[end - 2..end] != b"\r\n" {
                return Err("a bulk string not ended by CRLF".into());
            }
            *bytes += n as u64;
            Ok(Some(end))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let per = if matches!(tag, b'%' | b'|') { 2 } else { 1 };
            // Elements are read only as far as they have arrived.
            let Some(n) = count(line, MAX_BULK)? else {
                return Ok(Some(next));
            };
            let mut at = next;
            for _ in 0..n * per {
                match value(buf, at, depth + 1, bytes)? {
                    Some(end) => at = end,
                    None => return Ok(None),
                }
            }
            Ok(Some(at))
        }
        other => Err(format!("unexpected RESP type byte {other:#04x}")),
    }
}

/// The text of the line starting at `at` after its type byte, and where the
/// next begins; `None` while the line is incomplete.
fn line(buf: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, String> {
    let Some(rest) = buf.get(at + 1..) else {
        return Ok(None);
    };
    match rest.iter().position(|&b| b == b'\n') {
        Some(0) => Err("a RESP line without CR".into()),
        Some(nl) if rest[nl - 1] == b'\r' => Ok(Some((&rest[..nl - 1], at + 1 + nl + 1))),
        Some(_) => Err("a RESP line without CR".into()),
        None if rest.len() > 64 << 10 => Err("a RESP line over 64 KiB".into()),
        None => Ok(None),
    }
}

/// A declared count or length: `None` for -1 (null), an error beyond `max`.
fn count(line: &[u8], max: usize) -> Result<Option<usize>, String> {
    if line == b"-1" {
        return Ok(None);
    }
    let n: usize = std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad RESP length {:?}", String::from_utf8_lossy(line)))?;
    match n <= max {
        true => Ok(Some(n)),
        false => Err(format!("a RESP length of {n} (at most {max} accepted)")),
    }
}

/// Reads `data` as a session would (for fuzzing).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn read_any(data: &[u8]) {
    let mut rest = data;
    while let Ok(Some(p)) = parse(rest) {
        rest = &rest[p.len..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_an_array_of_bulk_strings() {
        let mut out = Vec::new();
        encode_command(&["SET", "a key", ""], &mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$5\r\na key\r\n$0\r\n\r\n");
    }

    #[test]
    fn whole_replies_are_measured_and_partial_ones_wait() {
        let whole = |b: &[u8]| parse(b).unwrap().unwrap();
        assert_eq!(whole(b"+PONG\r\nextra").len, 7);
        assert_eq!(whole(b"+PONG\r\n").bytes, 4);
        assert_eq!(whole(b"$5\r\nhello\r\n").bytes, 5);
        assert_eq!(whole(b"$-1\r\n").len, 5);
        let nested = b"*2\r\n$1\r\na\r\n*1\r\n:7\r\n";
        assert_eq!(whole(nested).len, nested.len());
        assert_eq!(whole(nested).bytes, 1);
        let err = whole(b"-ERR unknown command\r\n");
        assert_eq!(err.error.as_deref(), Some("ERR unknown command"));
        assert_eq!(whole(b"%1\r\n+k\r\n+v\r\n").bytes, 2);
        for cut in 0..nested.len() {
            assert_eq!(parse(&nested[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn what_is_not_resp_is_refused() {
        assert!(parse(b"hello\r\n").is_err());
        assert!(parse(b"$3\r\nabcd\r\n").is_err());
        assert!(parse(b"$999999999999\r\n").is_err());
        assert!(parse(b"+no cr\n").is_err());
        assert!(parse(b"*99\r\n").unwrap().is_none());
        let deep = "*1\r\n".repeat(100);
        assert!(parse(deep.as_bytes()).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(7),
            failure_persistence: None,
            ..Default::default()
        })]

        /// Whatever a server sends, reading it never panics.
        #[test]
        fn any_bytes_are_read_without_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            read_any(&bytes);
        }
    }
}
