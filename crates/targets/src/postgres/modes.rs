//! pgbench's query modes (`--query-mode`) as bytes on the wire: `simple`
//! (one Query message, the parameters inlined as quoted literals),
//! `extended` (Parse of the unnamed statement, Bind, Execute, Sync each
//! time: nothing outlives the request, so a transaction-pooling proxy may
//! hand each request to another server connection) and `prepared` (Bind,
//! Execute, Sync of a named statement, its Parse sent in the same write as
//! a session's first request).
use super::params::TextParam;
use super::wire::{encode_request, STATEMENT};
use bytes::{Bytes, BytesMut};
use poolbench_model::QueryMode;
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

/// One request of `mode` running `query` with `params`; an error when the
/// query cannot be sent (a NUL byte in simple mode's text).
pub(crate) fn encode(mode: QueryMode, query: &str, params: &[TextParam]) -> Result<Bytes, String> {
    match mode {
        QueryMode::Prepared => Ok(encode_request(params)),
        QueryMode::Extended => {
            let mut buf = BytesMut::new();
            frontend::parse("", query, std::iter::empty(), &mut buf).map_err(|e| e.to_string())?;
            let formats: &[i16] = if params.is_empty() { &[] } else { &[0] };
            frontend::bind(
                "",
                "",
                formats.iter().copied(),
                params.iter(),
                |p: &TextParam, out: &mut BytesMut| {
                    out.extend_from_slice(&p.0);
                    Ok(IsNull::No)
                },
                std::iter::empty::<i16>(),
                &mut buf,
            )
            .map_err(|_| "the parameters cannot be encoded".to_string())?;
            frontend::execute("", 0, &mut buf).map_err(|e| e.to_string())?;
            frontend::sync(&mut buf);
            Ok(buf.freeze())
        }
        QueryMode::Simple => {
            let mut buf = BytesMut::new();
            frontend::query(&inline(query, params), &mut buf)
                .map_err(|e| format!("the query cannot be sent in simple mode: {e}"))?;
            Ok(buf.freeze())
        }
    }
}

/// `prepared`: the Parse of the named statement, sent before a session's
/// first request (and again after a Parse the server refused).
pub(crate) fn encode_parse(query: &str) -> Result<Bytes, String> {
    let mut buf = BytesMut::new();
    frontend::parse(STATEMENT, query, std::iter::empty(), &mut buf).map_err(|e| e.to_string())?;
    Ok(buf.freeze())
}

/// A piece of a query's text: as it is, or the placeholder `$N`.
enum Piece<'a> {
    Text(&'a str),
    Param(usize),
}

/// The query split at its placeholders (`$1`, `$2`, …), skipping quoted
/// strings (`'…'`, `E'…'`, `$tag$…$tag$`), quoted names (`"…"`) and
/// comments.
fn pieces(query: &str) -> Vec<Piece<'_>> {
    let b = query.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                // Only E'…' strings escape with a backslash.
                let escapes = q == b'\'' && i > 0 && matches!(b[i - 1], b'E' | b'e');
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if escapes && b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'$' => {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
                if digits > 0 && !word_before {
                    out.push(Piece::Text(&query[from..i]));
                    let n = query[i + 1..i + 1 + digits].parse().unwrap_or(usize::MAX);
                    out.push(Piece::Param(n));
                    i += 1 + digits;
                    from = i;
                    continue;
                }
                i = skip_dollar_quote(query, i, word_before);
            }
            _ => i += 1,
        }
    }
    out.push(Piece::Text(&query[from.min(query.len())..]));
    out
}

/// Past a dollar-quoted string starting at `at` (`$$…$$`, `$tag$…$tag$`);
/// past the `$` alone when it starts none.
fn skip_dollar_quote(query: &str, at: usize, word_before: bool) -> usize {
    let rest = &query[at + 1..];
    let tag_len = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    if word_before || rest.as_bytes().get(tag_len) != Some(&b'$') {
        return at + 1;
    }
    let tag = &query[at..at + tag_len + 2];
    let body = at + tag.len();
    match query[body..].find(tag) {
        Some(end) => body + end + tag.len(),
        None => query.len(),
    }
}

/// The highest placeholder the query names (0 without any).
pub(crate) fn placeholders(query: &str) -> usize {
    pieces(query)
        .iter()
        .filter_map(|p| match p {
            Piece::Param(n) => Some(*n),
            Piece::Text(_) => None,
        })
        .max()
        .unwrap_or(0)
}

/// The query with each `$N` replaced by its value as a quoted literal
/// (`'it''s'`; `E'…'` with backslashes doubled when the value has one, so
/// the text means the same whatever `standard_conforming_strings` says).
/// The server gives the literal the type it would have given `$N`.
pub(crate) fn inline(query: &str, params: &[TextParam]) -> String {
    let mut out = String::with_capacity(query.len() + 16 * params.len());
    for piece in pieces(query) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Param(n) => match n.checked_sub(1).and_then(|i| params.get(i)) {
                Some(v) => out.push_str(&literal(&String::from_utf8_lossy(&v.0))),
                None => {
                    out.push('$');
                    out.push_str(&n.to_string());
                }
            },
        }
    }
    out
}

fn literal(value: &str) -> String {
    let quoted = value.replace('\'', "''");
    match value.contains('\\') {
        true => format!("E'{}'", quoted.replace('\\', "\\\\")),
        false => format!("'{quoted}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str) -> TextParam {
        TextParam(v.as_bytes().to_vec())
    }

    #[test]
    fn placeholders_are_inlined_as_quoted_literals_outside_strings() {
        let q = "SELECT $1::int, '$2', \"a$2\", $$ $1 $$, $2 -- $3\n";
        assert_eq!(placeholders(q), 2);
        assert_eq!(
            inline(q, &[p("42"), p("it's")]),
            "SELECT '42'::int, '$2', \"a$2\", $$ $1 $$, 'it''s' -- $3\n"
        );
        assert_eq!(inline("SELECT $1", &[p(r"a\'")]), r"SELECT E'a\\'''");
        assert_eq!(
            inline("SELECT $tag$ $1 $tag$", &[p("x")]),
            "SELECT $tag$ $1 $tag$"
        );
        assert_eq!(placeholders("SELECT 1"), 0);
        assert_eq!(placeholders("SELECT $12"), 12);
    }

    #[test]
    fn each_mode_sends_its_messages() {
        let tags = |b: &[u8]| {
            let mut rest = b;
            let mut tags = Vec::new();
            while !rest.is_empty() {
                let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
                tags.push(rest[0]);
                rest = &rest[1 + len..];
            }
            tags
        };
        let params = [p("7")];
        let q = "SELECT $1::int";
        assert_eq!(
            tags(&encode(QueryMode::Prepared, q, &params).unwrap()),
            b"BES"
        );
        assert_eq!(
            tags(&encode(QueryMode::Extended, q, &params).unwrap()),
            b"PBES"
        );
        let simple = encode(QueryMode::Simple, q, &params).unwrap();
        assert_eq!(tags(&simple), b"Q");
        assert!(String::from_utf8_lossy(&simple).contains("'7'::int"));
        assert!(encode(QueryMode::Simple, q, &[p("a\0b")]).is_err());
        assert_eq!(tags(&encode_parse(q).unwrap()), b"P");
    }
}
